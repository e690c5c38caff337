import Foundation
import OCTunnelTestSupport
import Testing

@testable import OCTunnelCore

/// Issue 54's run with only `home up` (no laptop at all): over the run the agent asks permissions
/// and questions, finishes and fails, one moment a second in turn (each kind once every 4 s, the
/// notifier's refill, so no summary is due); the scripted phone taps one button of each push as it
/// arrives, then another of the same push. Every moment reaches the phone once, every first tap
/// reaches OpenCode once, every second one sends nothing. 60 s with `OCTUNNEL_LONG_TESTS=1`,
/// else 8 s (two of each kind); against a real ntfy (Debian 13's 2.11), both OpenCode generations.
@Suite(
    "home up alone: every moment of a run pushed once, every button works once", .serialized, .ownThreads,
    .timeLimit(.minutes(4)))
struct HomeOnlyRunTests {
    /// The push whose buttons answer `id` (waited for).
    static func push(for id: String, _ phone: NtfyPhone) -> [String: Any]? {
        var found: [String: Any]?
        _ = waitUntil(timeout: 20) {
            found = ((try? phone.messages()) ?? []).first { message in
                NtfyPhone.actions(message).contains { ($0["body"] as? String).flatMap(PushTap.parse)?.requestID == id }
            }
            return found != nil
        }
        return found
    }

    /// What the run asked: the requests with buttons, the finishes and the failures.
    struct Asked {
        var requests: [String] = []
        var finished = 0
        var failed = 0
    }

    /// One moment of step `step` (kinds in turn); a request's push tapped twice as the phone would.
    static func step(_ step: Int, _ backend: OpenCodeStandIn, _ phone: NtfyPhone, _ asked: inout Asked) throws {
        let session = "ses_run\(step)"
        switch step % 4 {
        case 0, 1:
            let id: String?
            if step % 4 == 0 {
                id = backend.askPermission(session: session, patterns: ["make step\(step)"])
            } else {
                id = backend.askQuestion(session: session, "Which?", labels: ["Postgres", "SQLite"])?.id
            }
            let request = try #require(id, "step \(step): nothing asked")
            asked.requests.append(request)
            let buttons = NtfyPhone.actions(
                try #require(push(for: request, phone), "step \(step): \(request) never pushed"))
            let before = backend.replies.count
            #expect(try phone.tap(buttons[step / 4 % 2]) == 200)
            #expect(
                waitUntil(timeout: 20) { backend.replies.count == before + 1 },
                "step \(step): the tap never reached OpenCode")
            #expect(try phone.tap(buttons[2]) == 200)
        case 2:
            for event in StandInEvent.finish(session, title: "Step \(step)") {
                #expect(backend.post("/standin/emit", event).status == 200)
            }
            asked.finished += 1
        default:
            #expect(backend.post("/standin/emit", StandInEvent.failure(session, "step \(step)")).status == 200)
            asked.failed += 1
        }
    }

    @Test(
        "a run of permissions, questions, finishes and failures: each pushed once; each first tap answers once, each second nothing",
        arguments: ["opencode1", "opencode2"])
    func everyMomentOnce(flavor: String) throws {
        try HomePushTests.withScene(flavor) { scene in
            let (backend, phone, lines) = (scene.backend, scene.run.phone, scene.run.lines)

            let steps = Int(TestLengths.seconds(field: 60, short: 8))
            let started = Date()
            var asked = Asked()
            for index in 0..<steps {
                let due = started + Double(index)
                if due > Date() { Thread.sleep(until: due) }
                try Self.step(index, backend, phone, &asked)
            }
            let wanted = asked.requests.count + asked.finished + asked.failed
            #expect(waitUntil(timeout: 30) { ((try? phone.messages()) ?? []).count >= wanted }, "\(lines.text)")
            Thread.sleep(forTimeInterval: 1) // anything more would be a second copy or a summary
            let messages = try phone.messages()
            let titles = messages.compactMap { $0["title"] as? String }
            #expect(messages.count == wanted, "\(titles)")
            for id in asked.requests {
                let copies = messages.filter { message in
                    NtfyPhone.actions(message).contains {
                        ($0["body"] as? String).flatMap(PushTap.parse)?.requestID == id
                    }
                }
                #expect(copies.count == 1, "\(id): \(copies.count) pushes")
                #expect(
                    lines.text.filter { $0.hasPrefix("push: \(id) ") && $0.hasSuffix(" from the phone") }.count == 1,
                    "\(id)")
                #expect(
                    lines.text.contains { $0.contains("replayed tap for request \(id) sent nothing") },
                    "\(id): the second tap")
            }
            #expect(titles.filter { $0.hasPrefix("OpenCode finished") }.count == asked.finished, "\(titles)")
            #expect(titles.filter { $0.hasPrefix("OpenCode failed") }.count == asked.failed, "\(titles)")
            let replies = backend.replies
            #expect(replies.count == asked.requests.count, "\(replies)")
            let answered = replies.compactMap { $0["path"] as? String }
            #expect(Set(answered).count == answered.count, "a request answered twice: \(answered)")
            print(
                "home alone (\(flavor)): \(steps) s, \(messages.count) pushes for \(wanted) moments, \(replies.count) answers"
                    + " for \(asked.requests.count) requests")
        }
    }
}
