import Foundation
import OCTunnelCore

/// The input libFuzzer hands over, as an array.
public func input(_ data: UnsafePointer<UInt8>, _ size: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: data, count: size))
}

/// Bytes in hex, so a failure message can be replayed exactly.
public func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    "[" + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + "]"
}

/// A text's UTF-8 in hex.
public func hex(_ text: String) -> String { hex(Array(text.utf8)) }

/// Whether `text` may reach a terminal as it is: `OutsideText` finds nothing in it to escape
/// (no control character, no bidirectional override). Line breaks are allowed when `lines` is
/// true, for the messages that are several lines on purpose.
public func isShownClean(_ text: String, lines: Bool = false) -> Bool {
    let checked = lines ? text.replacingOccurrences(of: "\n", with: " ") : text
    return OutsideText.shown(checked, limit: Int.max) == checked
}

/// Traps unless `error`'s message, as the user reads it, is clean (see `isShownClean`).
public func checkShown(_ error: any Error, lines: Bool = false, _ context: @autoclosure () -> String) {
    let text = asFailure(error).errorDescription ?? ""
    precondition(
        isShownClean(text, lines: lines),
        "\(context()): the message shows raw outside text: \(hex(text)) \(text.debugDescription)")
}

/// A directory of this process's own, made once, for targets that read or write files: they
/// never touch anything outside it.
public let scratchDirectory: String = {
    var template = Array((NSTemporaryDirectory() + "/octunnel-fuzz.XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed") }
    return String(cString: made)
}()

/// Writes `bytes` to `path` (mode 0600), replacing what was there.
public func writeFile(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    precondition(fd >= 0, "cannot write \(path)")
    defer { close(fd) }
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        precondition(count > 0, "cannot write \(path)")
        written += count
    }
}
