import Foundation
import FuzzSupport
import OCTunnelCore

/// The status socket takes no request: its server only writes one JSON line, and what is read
/// from outside is that reply, by `status`, `reconnect` and the tests (`StatusSnapshot(jsonText:)`).
/// Each input is such a reply. Promises: a reply that reads as a status has valid ports and
/// targets, writing it out and reading it back is stable, and `status`'s lines for people
/// (`humanLines`) are clean for a terminal whatever the reply says.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let snapshot = StatusSnapshot(jsonText: String(decoding: bytes, as: UTF8.self)) else { return 0 }
    precondition((1...65535).contains(snapshot.target.port), "target port \(snapshot.target.port) from \(hex(bytes))")
    for endpoint in [snapshot.local, snapshot.remote].compactMap({ $0 }) {
        precondition((0...65535).contains(endpoint.port), "port \(endpoint.port) from \(hex(bytes))")
    }
    guard let again = StatusSnapshot(jsonText: snapshot.jsonText) else {
        preconditionFailure(
            "our own status line does not read back: \(snapshot.jsonText.debugDescription) from \(hex(bytes))")
    }
    precondition(
        again.jsonText == snapshot.jsonText,
        "\(snapshot.jsonText.debugDescription) reads back as \(again.jsonText.debugDescription)")
    for line in snapshot.humanLines(now: Date(timeIntervalSince1970: 1_795_000_000)) {
        precondition(isShownClean(line), "status would print \(line.debugDescription) from \(hex(bytes))")
    }
    return 0
}
