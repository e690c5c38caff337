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

    /// Waits until `desktop` shows a notification that `matches`; the test stops there, with what was shown, if
    /// none comes within 20 s.
    static func requireShown(
        _ desktop: DesktopSession, _ tunnel: RunningProcess, sourceLocation: SourceLocation = #_sourceLocation,
        _ matches: @escaping @Sendable ([DesktopSession.Shown]) -> Bool
    ) async throws {
        let shown = try await offPool { waitUntil(timeout: 20) { matches(desktop.shown) } }
        try #require(shown, "\(desktop.shown) \(tunnel.stderrText)", sourceLocation: sourceLocation)
    }

    /// Waits for the stand-in's first reply: it must be the only one, `body` to `path`, and `tunnel` must say
    /// `said`. When the reply was seen (the click's round trip ends there).
    static func expectReply(
        _ path: String, _ body: String, said: String, _ backend: OpenCodeStandIn, _ tunnel: RunningProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Date {
        let recorded = try await offPool { waitUntil(timeout: 20) { !backend.replies.isEmpty } }
        let seen = Date()
        #expect(recorded, "\(tunnel.stderrText)", sourceLocation: sourceLocation)
        #expect(backend.repliesSent == [path + " " + body], sourceLocation: sourceLocation)
        let line = try await offPool { tunnel.waitForLine(containing: said) }
        #expect(line != nil, "\(tunnel.stderrText)", sourceLocation: sourceLocation)
        return seen
    }

    /// The pending `kind` ("permission", "question") `id`, answered elsewhere first (the stand-in forgets it), then
    /// chosen with `action` on its notification: said on stderr and in a follow-up notification, nothing sent (the
    /// stand-in still holds `replies` replies); the password nowhere.
    static func expectAnsweredElsewhere(
        _ kind: String, _ id: String, action: String, replies: Int,
        _ desktop: DesktopSession, _ backend: OpenCodeStandIn, _ tunnel: RunningProcess, password: String
    ) async throws {
        #expect(backend.post("/standin/forget", [:]).status == 200)
        try desktop.choose(action: action)
        let said = try await offPool { tunnel.waitForLine(containing: "\(kind) \(id) is no longer pending") }
        #expect(said != nil, "\(tunnel.stderrText)")
        let followUp = "OpenCode's \(kind) was not answered"
        #expect(
            try await offPool { waitUntil(timeout: 20) { desktop.shown.contains { $0.summary.hasPrefix(followUp) } } },
            "\(desktop.shown)")
        #expect(backend.replies.count == replies, "\(backend.replies)")
        #expect(!(tunnel.stderrText + desktop.shown.map { $0.summary + $0.body }.joined()).contains(password))
    }

    @Test(
        "1.x and 2.x: \"Allow always\" chosen on the notification reaches OpenCode once, said on stderr; chosen on one answered elsewhere first, it is said on stderr and in a follow-up notification, nothing sent",
        arguments: ["opencode1", "opencode2"])
    func answerFromDesktop(flavor: String) async throws {
        try await Self.withDesktopTunnel(flavor: flavor) { desktop, backend, tunnel, password in
            let id = try #require(backend.askPermission(session: "ses_a", patterns: ["git push"]))
            try await Self.requireShown(desktop, tunnel) {
                $0.contains { $0.summary.hasPrefix("OpenCode asks for permission") }
            }
            let clicked = Date()
            try desktop.choose(action: "always")
            let recorded = try await Self.expectReply(
                OpenCodeStandIn.replyPath(flavor: flavor, "permission", id, session: "ses_a"), #"{"reply":"always"}"#,
                said: "permission \(id) allowed always from the notification", backend, tunnel)
            let took = recorded.timeIntervalSince(clicked)
            print("answer from the notification (\(flavor)): click → reply recorded in \(Int(took * 1000)) ms")

            // Answered elsewhere first (OpenCode restarted and forgot it): said plainly, never sent.
            let second = try #require(backend.askPermission(session: "ses_a", patterns: ["rm -rf build"]))
            try await Self.requireShown(desktop, tunnel) {
                $0.filter { $0.summary.hasPrefix("OpenCode asks for permission") }.count >= 2
            }
            try await Self.expectAnsweredElsewhere(
                "permission", second, action: "once", replies: 1, desktop, backend, tunnel, password: password)
        }
    }
}
