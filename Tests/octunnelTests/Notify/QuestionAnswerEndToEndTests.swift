import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48, "a question answered from its notification", end to end: `tunnel up` through a real
/// sshd to the stand-in, on a desktop of the test's own (a session bus, Xvfb, dunst); the
/// question's notification shows its options as actions, one is invoked as a click does (dunst's
/// context menu), and the stand-in records the answer.
@Suite("answer a question from its desktop notification", .ownThreads, .timeLimit(.minutes(3)))
struct QuestionAnswerEndToEndTests {
    static func ask(_ backend: OpenCodeStandIn, _ question: String, _ labels: [String]) -> String? {
        backend.askQuestion(session: "ses_a", question, labels: labels)?.id
    }

    /// Waits until `desktop` shows the question that reads `question`.
    static func requireShown(
        _ question: String, _ desktop: DesktopSession, _ tunnel: RunningProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await NotificationAnswerEndToEndTests.requireShown(desktop, tunnel, sourceLocation: sourceLocation) {
            $0.contains { $0.body.contains(question) }
        }
    }

    @Test(
        "1.x and 2.x: the second of two options chosen on the notification reaches OpenCode once, as that label, said on stderr; chosen on one answered elsewhere first, it is said on stderr and in a follow-up notification, nothing sent",
        arguments: ["opencode1", "opencode2"])
    func answerFromDesktop(flavor: String) async throws {
        try await NotificationAnswerEndToEndTests.withDesktopTunnel(flavor: flavor) {
            desktop, backend, tunnel, password in
            let id = try #require(Self.ask(backend, "Which database?", ["Postgres", "SQLite"]))
            try await Self.requireShown("Which database?", desktop, tunnel)
            try desktop.choose(action: "q1")
            _ = try await NotificationAnswerEndToEndTests.expectReply(
                OpenCodeStandIn.replyPath(flavor: flavor, "question", id, session: "ses_a"),
                #"{"answers":[["SQLite"]]}"#,
                said: "question \(id) answered \"SQLite\" from the notification", backend, tunnel)

            // Hostile labels reach the real notify-send inside their own --action argument: one that
            // reads as an option stays a label, and the label sent is the one OpenCode sent, whole.
            let hostile = ["--expire-time=1", "-u low \u{1b}[2J"]
            let third = try #require(Self.ask(backend, "Which flag?", hostile))
            try await Self.requireShown("Which flag?", desktop, tunnel)
            try desktop.choose(action: "q1")
            #expect(try await offPool { waitUntil(timeout: 20) { backend.replies.count == 2 } }, "\(tunnel.stderrText)")
            let sent = try #require(backend.replies.last?["body"] as? String)
            #expect(
                (try JSONSerialization.jsonObject(with: Data(sent.utf8)) as? [String: [[String]]]) == [
                    "answers": [[hostile[1]]]
                ], "\(sent)")
            #expect(
                backend.replies.last?["path"] as? String
                    == OpenCodeStandIn.replyPath(flavor: flavor, "question", third, session: "ses_a"))
            #expect(!tunnel.stderrText.contains("\u{1b}"), "\(tunnel.stderrText)")

            // Answered elsewhere first (OpenCode restarted and forgot it): said plainly, never sent.
            let second = try #require(Self.ask(backend, "Which cache?", ["Redis", "None"]))
            try await Self.requireShown("Which cache?", desktop, tunnel)
            try await NotificationAnswerEndToEndTests.expectAnsweredElsewhere(
                "question", second, action: "q0", replies: 2, desktop, backend, tunnel, password: password)
        }
    }
}
