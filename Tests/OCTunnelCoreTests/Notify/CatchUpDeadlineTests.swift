import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48: the catch-up as the stream connects has one deadline for all its requests, so a
/// home that takes connections and never answers cannot hold the follower's thread per request
/// times directories.
@Suite("the catch-up: one deadline for every request", .ownThreads, .timeLimit(.minutes(1)))
struct CatchUpDeadlineTests {
    @Test(
        "against a peer that accepts and never answers, with 9 directories seen: over by the deadline, nothing told, the lists' failure said once"
    )
    func silentHome() async throws {
        // A real listener that never accepts: the kernel completes each connection, no byte comes back.
        let silent = try RunningProcess(
            python3,
            [
                "-c",
                """
                import socket, time
                s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(128)
                print("LISTENING", s.getsockname()[1], flush=True); time.sleep(120)
                """,
            ])
        defer { silent.signal(SIGKILL); _ = silent.waitForExit(timeout: 5) }
        let line = try #require(silent.waitForLine(containing: "LISTENING", stdout: true, timeout: 15))
        let port = try #require(Int(line.split(separator: " ").last ?? ""))
        var watch = AgentSessionWatch()
        for index in 0..<9 {
            _ = watch.feed(
                data:
                    #"{"directory":"/home/me/p\#(index)","payload":{"type":"session.status","properties":{"sessionID":"ses_\#(index)","status":{"type":"busy"}}}}"#,
                now: 0)
        }
        #expect(watch.directories().count == 8)
        let catchUp = CatchUp(host: "127.0.0.1", port: port, credentials: OpenCodeCredentials(), seconds: 1)
        let started = Date()
        var failures: [String] = []
        let moments = catchUp.moments(&watch) { failures.append($0) }
        let took = Date().timeIntervalSince(started)
        #expect(moments.isEmpty && failures.count == 1, "\(moments) \(failures)")
        // One request per directory at 1 s each would take 9 s and more: a hang guard well above the deadline.
        #expect(took < 4, "the catch-up took \(took) s past its 1 s deadline")
    }
}
