import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48, "answer from the notification", end to end: `tunnel up` through a real sshd to the
/// stand-in, on a desktop of the test's own (a session bus, Xvfb, dunst); the permission's
/// notification shows its actions, one is invoked as a click does (dunst's context menu), and
/// the stand-in records the reply.
@Suite("answer a permission from its desktop notification", .ownThreads, .timeLimit(.minutes(3)))
struct NotificationAnswerEndToEndTests {
    /// A `flavor` stand-in with a fresh password and `tunnel up` through a real sshd to it (the
    /// password in its environment), its notifications on a desktop of the test's own; `body`
    /// runs once the tunnel is healthy and follows the stand-in's events, then all is stopped.
    static func withDesktopTunnel(
        flavor: String,
        _ body: (_ desktop: DesktopSession, _ backend: OpenCodeStandIn, _ tunnel: RunningProcess, _ password: String)
            async throws -> Void
    )
        async throws
    {
        let desktop = try DesktopSession()
        defer { desktop.stop() }
        let (backend, password) = try OpenCodeStandIn.withFreshPassword(flavor: flavor)
        defer { backend.stop() }
        let fixture = try TunnelFixture()
        let environment = inheritedEnvironment.merging(desktop.environment) { $1 }.merging([
            "OPENCODE_PASSWORD": password
        ]) { $1 }
        let tunnel = try fixture.up(remotePort: backend.port, extra: ["--no-pair-port"], environment: environment)
        defer { tunnel.stopGracefullyOrKill(); withExtendedLifetime(fixture) {} }
        try await NotifyTests.requireFollowing(backend, tunnel)
        try await body(desktop, backend, tunnel, password)
    }

    @Test(
        "1.x and 2.x: \"Allow always\" chosen on the notification reaches OpenCode once, said on stderr; chosen on one answered elsewhere first, it is said on stderr and in a follow-up notification, nothing sent",
        arguments: ["opencode1", "opencode2"])
    func answerFromDesktop(flavor: String) async throws {
        try await Self.withDesktopTunnel(flavor: flavor) { desktop, backend, tunnel, password in
            let id = try #require(backend.askPermission(session: "ses_a", patterns: ["git push"]))
            try #require(
                try await offPool {
                    waitUntil(timeout: 20) {
                        desktop.shown.contains { $0.summary.hasPrefix("OpenCode asks for permission") }
                    }
                },
                "\(desktop.shown) \(tunnel.stderrText)")
            let clicked = Date()
            try desktop.choose(action: "always")
            let recorded = try await offPool { waitUntil(timeout: 20) { !backend.replies.isEmpty } }
            let took = Date().timeIntervalSince(clicked)
            #expect(recorded, "\(tunnel.stderrText)")
            let replies = backend.replies
            #expect(replies.count == 1, "\(replies)")
            #expect(
                replies.first?["path"] as? String
                    == (flavor == "opencode1"
                        ? "/permission/\(id)/reply" : "/api/session/ses_a/permission/\(id)/reply"),
                "\(replies)")
            #expect(replies.first?["body"] as? String == #"{"reply":"always"}"#, "\(replies)")
            #expect(
                try await offPool {
                    tunnel.waitForLine(containing: "permission \(id) allowed always from the notification")
                } != nil,
                "\(tunnel.stderrText)")
            print("answer from the notification (\(flavor)): click → reply recorded in \(Int(took * 1000)) ms")

            // Answered elsewhere first (OpenCode restarted and forgot it): said plainly, never sent.
            let second = try #require(backend.askPermission(session: "ses_a", patterns: ["rm -rf build"]))
            try #require(
                try await offPool {
                    waitUntil(timeout: 20) {
                        desktop.shown.filter { $0.summary.hasPrefix("OpenCode asks for permission") }.count >= 2
                    }
                },
                "\(desktop.shown) \(tunnel.stderrText)")
            #expect(backend.post("/standin/forget", [:]).status == 200)
            try desktop.choose(action: "once")
            #expect(
                try await offPool { tunnel.waitForLine(containing: "permission \(second) is no longer pending") }
                    != nil, "\(tunnel.stderrText)")
            #expect(
                try await offPool {
                    waitUntil(timeout: 20) {
                        desktop.shown.contains { $0.summary.hasPrefix("OpenCode's permission was not answered") }
                    }
                },
                "\(desktop.shown)")
            #expect(backend.replies.count == 1, "\(backend.replies)")
            #expect(!(tunnel.stderrText + desktop.shown.map { $0.summary + $0.body }.joined()).contains(password))
        }
    }
}
