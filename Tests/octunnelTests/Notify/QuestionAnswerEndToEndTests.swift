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
        let options = labels.map { ["label": $0, "description": "about \($0)"] }
        let answer = backend.post(
            "/standin/question",
            ["sessionID": "ses_a", "questions": [["question": question, "header": "DB", "options": options]]])
        return (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["id"] as? String
    }

    @Test(
        "1.x and 2.x: the second of two options chosen on the notification reaches OpenCode once, as that label, said on stderr; chosen on one answered elsewhere first, it is said on stderr and in a follow-up notification, nothing sent",
        arguments: ["opencode1", "opencode2"])
    func answerFromDesktop(flavor: String) async throws {
        try await NotificationAnswerEndToEndTests.withDesktopTunnel(flavor: flavor) {
            desktop, backend, tunnel, password in
            let id = try #require(Self.ask(backend, "Which database?", ["Postgres", "SQLite"]))
            try #require(
                try await offPool {
                    waitUntil(timeout: 20) { desktop.shown.contains { $0.body.contains("Which database?") } }
                },
                "\(desktop.shown) \(tunnel.stderrText)")
            try desktop.choose(action: "q1")
            #expect(try await offPool { waitUntil(timeout: 20) { !backend.replies.isEmpty } }, "\(tunnel.stderrText)")
            let replies = backend.replies
            #expect(replies.count == 1, "\(replies)")
            #expect(
                replies.first?["path"] as? String
                    == (flavor == "opencode1" ? "/question/\(id)/reply" : "/api/session/ses_a/question/\(id)/reply"),
                "\(replies)")
            #expect(replies.first?["body"] as? String == #"{"answers":[["SQLite"]]}"#, "\(replies)")
            #expect(
                try await offPool {
                    tunnel.waitForLine(containing: "question \(id) answered \"SQLite\" from the notification")
                } != nil,
                "\(tunnel.stderrText)")

            // Hostile labels reach the real notify-send inside their own --action argument: one that
            // reads as an option stays a label, and the label sent is the one OpenCode sent, whole.
            let hostile = ["--expire-time=1", "-u low \u{1b}[2J"]
            let third = try #require(Self.ask(backend, "Which flag?", hostile))
            try #require(
                try await offPool {
                    waitUntil(timeout: 20) { desktop.shown.contains { $0.body.contains("Which flag?") } }
                },
                "\(desktop.shown) \(tunnel.stderrText)")
            try desktop.choose(action: "q1")
            #expect(try await offPool { waitUntil(timeout: 20) { backend.replies.count == 2 } }, "\(tunnel.stderrText)")
            let sent = try #require(backend.replies.last?["body"] as? String)
            #expect(
                (try JSONSerialization.jsonObject(with: Data(sent.utf8)) as? [String: [[String]]]) == [
                    "answers": [[hostile[1]]]
                ], "\(sent)")
            #expect(
                backend.replies.last?["path"] as? String
                    == (flavor == "opencode1"
                        ? "/question/\(third)/reply" : "/api/session/ses_a/question/\(third)/reply"))
            #expect(!tunnel.stderrText.contains("\u{1b}"), "\(tunnel.stderrText)")

            // Answered elsewhere first (OpenCode restarted and forgot it): said plainly, never sent.
            let second = try #require(Self.ask(backend, "Which cache?", ["Redis", "None"]))
            try #require(
                try await offPool {
                    waitUntil(timeout: 20) { desktop.shown.contains { $0.body.contains("Which cache?") } }
                },
                "\(desktop.shown) \(tunnel.stderrText)")
            #expect(backend.post("/standin/forget", [:]).status == 200)
            try desktop.choose(action: "q0")
            #expect(
                try await offPool { tunnel.waitForLine(containing: "question \(second) is no longer pending") } != nil,
                "\(tunnel.stderrText)")
            #expect(
                try await offPool {
                    waitUntil(timeout: 20) {
                        desktop.shown.contains { $0.summary.hasPrefix("OpenCode's question was not answered") }
                    }
                },
                "\(desktop.shown)")
            #expect(backend.replies.count == 2, "\(backend.replies)")
            #expect(!(tunnel.stderrText + desktop.shown.map { $0.summary + $0.body }.joined()).contains(password))
        }
    }
}
