import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// What a hostile or broken stream can make `AgentSessionWatch` keep (issue 48): sessions capped with
/// idle ones dropped first, texts cut where they are stored, every text redacted before the cut.
@Suite("AgentSessionWatch stays bounded whatever the stream sends", .ownThreads)
struct AgentSessionWatchBoundsTests {
    static func event(_ type: String, _ properties: [String: Any]) -> OpenCodeEvent {
        OpenCodeEvent(type: type, fields: properties)
    }
    static func status(_ id: String, _ type: String) -> OpenCodeEvent {
        event("session.status", ["sessionID": id, "status": ["type": type]])
    }

    @Test(
        "20,000 sessions: at most the cap kept; the idle ones go first, a busy one heard of long ago stays and is told finished"
    )
    func manySessions() {
        var watch = AgentSessionWatch()
        _ = watch.feed(Self.status("early-busy", "busy"), now: 0)
        for index in 0..<20_000 {
            _ = watch.feed(
                Self.event(
                    "session.updated", ["sessionID": "s\(index)", "info": ["id": "s\(index)", "title": "t\(index)"]]),
                now: 0)
            #expect(watch.due(now: 0).isEmpty)
        }
        #expect(watch.sessionCount <= AgentSessionWatch.Limits.sessions)
        _ = watch.feed(Self.status("early-busy", "idle"), now: 1)
        #expect(watch.due(now: 2).map(\.sessionID) == ["early-busy"])
    }

    @Test(
        "requests waiting: each asked counts once until it is answered (1.x requestID, older 1.x permissionID, 2.x id, a question rejected) or its session ends its turn; at most the bound"
    )
    func waiting() {
        var watch = AgentSessionWatch()
        _ = watch.feed(Self.status("s", "busy"), now: 0)
        for request in ["p1", "p2", "p3", "p4", "p1"] {
            _ = watch.feed(
                Self.event("permission.asked", ["sessionID": "s", "id": request, "permission": "bash"]), now: 0)
        }
        _ = watch.feed(
            Self.event("question.asked", ["sessionID": "t", "id": "q1", "questions": [["question": "Which?"]]]), now: 0)
        #expect(watch.waitingCount == 5)
        _ = watch.feed(
            Self.event("permission.replied", ["sessionID": "s", "requestID": "p1", "reply": "once"]), now: 0)
        _ = watch.feed(
            Self.event("permission.replied", ["sessionID": "s", "permissionID": "p2", "response": "always"]), now: 0)
        _ = watch.feed(Self.event("permission.v2.replied", ["sessionID": "s", "id": "p3"]), now: 0)
        _ = watch.feed(Self.event("question.rejected", ["sessionID": "t", "requestID": "q1"]), now: 0)
        #expect(watch.waitingCount == 1)
        _ = watch.feed(Self.status("s", "idle"), now: 1)
        #expect(watch.due(now: 2).count == 1 && watch.waitingCount == 0, "the session finished: p4 waits no more")
        for request in 0..<(AgentSessionWatch.Limits.waiting + 50) {
            _ = watch.feed(
                Self.event("permission.asked", ["sessionID": "u", "id": "r\(request)", "permission": "bash"]), now: 3)
        }
        #expect(watch.waitingCount == AgentSessionWatch.Limits.waiting)
    }

    @Test("a 900 KB title, directory, request and error message are kept as a few hundred bytes, cut marked")
    func bigTexts() {
        var watch = AgentSessionWatch()
        let big = String(repeating: "é", count: 450_000)
        _ = watch.feed(
            Self.event(
                "session.updated", ["sessionID": "s", "info": ["id": "s", "title": big, "directory": "/" + big]]),
            now: 0)
        let asked = watch.feed(
            Self.event("permission.asked", ["sessionID": "s", "id": "p1", "permission": "bash", "patterns": [big]]),
            now: 0)
        let failed = watch.feed(
            Self.event("session.error", ["sessionID": "s", "error": ["name": "APIError", "data": ["message": big]]]),
            now: 0)
        for moment in asked + failed {
            #expect(
                (moment.title?.utf8.count ?? 0) <= AgentSessionWatch.Limits.title + 3
                    && moment.title?.hasSuffix("…") == true)
            #expect((moment.directory?.utf8.count ?? 0) <= AgentSessionWatch.Limits.directory + 3)
            #expect((moment.detail?.utf8.count ?? 0) <= AgentSessionWatch.Limits.detail + 3)
        }
        #expect(asked.count == 1 && failed.count == 1)
    }

    @Test("the password and its Basic token are redacted from what is kept, even where the cut splits them")
    func redactedBeforeTheCut() {
        let credentials = OpenCodeCredentials(password: "hunter2-long-secret")
        let token = String(credentials.authorization!.dropFirst(6))
        for cut in [AgentSessionWatch.Limits.title - 5, AgentSessionWatch.Limits.title - 1] {
            let kept = KeptText.kept(
                String(repeating: "a", count: cut) + "hunter2-long-secret and " + token,
                bytes: AgentSessionWatch.Limits.title,
                secrets: credentials.secrets)
            #expect(
                kept == String(repeating: "a", count: cut) + "…",
                "the split start of the secret is dropped: \(kept.suffix(20))")
        }
        let whole = KeptText.kept(
            "curl -u opencode:hunter2-long-secret -H 'Authorization: Basic \(token)'", bytes: 256,
            secrets: credentials.secrets)
        #expect(whole == "curl -u opencode:*** -H 'Authorization: Basic ***'")
    }
}
