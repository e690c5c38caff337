import Foundation
import FuzzSupport
import OCTunnelCore

/// OpenCode's event stream as `tunnel up` follows it for notifications (issue 40): the input's
/// lines are the events' `data:`, each a tenth of a second after the one before, then the time
/// runs on; then the same stream again after a reconnect. Promises: every moment's texts (the
/// line, headline, message, the command's environment) are clean for a terminal and bounded; a
/// moment names a session; "finished" needs session events; when every event has an id, the
/// two passes together tell no more permissions than the stream has events (a request is told once);
/// the OpenCode password and its Basic token (`secret`, `token`, in the dictionary) are in no text
/// of any moment, wherever the stream puts them and wherever a cut falls (issue 48).
/// The password planted, and its Basic token (base64 of "opencode:hunter2-sekret").
let secret = "hunter2-sekret"
let token = "b3BlbmNvZGU6aHVudGVyMi1zZWtyZXQ="

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let lines = input(data, size).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).prefix(200)
        .map { String(decoding: $0, as: UTF8.self) }
    var watch = AgentSessionWatch(secrets: [secret, token])
    var moments: [AgentMoment] = []
    var now = 0.0
    for round in 0..<2 {
        if round == 1 { watch.reconnected() }
        for line in lines {
            now += 0.1
            moments += watch.feed(data: line, now: now)
            moments += watch.due(now: now)
        }
        moments += watch.due(now: now + 10)
    }
    for moment in moments {
        precondition(!moment.sessionID.isEmpty, "\(moment)")
        for text in [moment.line, moment.headline, moment.message] + Array(moment.environment.values) {
            precondition(isShownClean(text) && text.unicodeScalars.count < 2_000, "\(text.debugDescription)")
            precondition(!text.contains(secret) && !text.contains(token), "a secret shown: \(text.debugDescription)")
        }
        if moment.kind == .finished {
            precondition(lines.contains { $0.contains("session.") }, "finished without a session event: \(moment)")
        }
    }
    // A permission request with an id is told once, whichever round it came in.
    let told = moments.filter { $0.kind == .permission }.map { "\($0.sessionID)|\($0.detail ?? "")" }
    let withID = lines.filter { $0.contains("\"id\"") }
    precondition(withID.count == lines.count ? told.count <= lines.count : true, "permissions told twice: \(told)")
    return 0
}
