import Foundation
import FuzzSupport
import OCTunnelCore

/// What `keys list`, `authorize` and the rotation read from the VPS: a program's output (listed
/// authorized_keys lines, then one report line), written by whoever can write that file or
/// answer for that login. Each input is such an output. Promises: the report's summary and every
/// `keys list` row are clean for a terminal whatever the file says; a line that reads as
/// octunnel's has real ports and renders to a line that reads back with the same role, ends
/// and key (when the rendering stays within sshd's line bound; past it, it reads as no line).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let output = String(decoding: bytes, as: UTF8.self)
    if let report = AuthorizedKeysReport.parse(output) {
        precondition(
            isShownClean(report.summary), "report summary \(report.summary.debugDescription) from \(hex(bytes))")
    }
    var lines = AuthorizedKeysScript.listedLines(in: output)
    if let whole = OctunnelKeyLine.parse(output) { lines.append(whole) }
    for line in lines {
        let row = VPSKeys.row(line)
        precondition(isShownClean(row), "keys list would print \(row.debugDescription) from \(hex(bytes))")
        for end in line.ends { precondition((1...65535).contains(end.port), "port \(end.port) from \(hex(bytes))") }
        // A read line is rendered with today's program (longer than an old one's) and its own
        // comment: past sshd's line bound (`longestLine`) it is refused on reading, as any line is.
        guard line.line.utf8.count <= OctunnelKeyLine.longestLine else {
            precondition(
                OctunnelKeyLine.parse(line.line) == nil, "a line past longestLine read back, from \(hex(bytes))")
            continue
        }
        guard let again = OctunnelKeyLine.parse(line.line) else {
            preconditionFailure(
                "our own rendering does not read back: \(line.line.debugDescription) from \(hex(bytes))")
        }
        precondition(
            again.role == line.role && again.ends == line.ends && again.key.line == line.key.line,
            "\(line.line.debugDescription) reads back as another line, from \(hex(bytes))")
    }
    return 0
}
