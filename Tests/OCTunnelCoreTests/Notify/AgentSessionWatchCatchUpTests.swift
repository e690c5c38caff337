import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48, "nothing missed across a cut": what OpenCode's pending lists say when the stream is
/// back, turned into moments, each told once whether it came on the stream or in a list.
@Suite("the catch-up after a cut: pending permissions and questions told once", .ownThreads)
struct AgentSessionWatchCatchUpTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func permission(
        _ id: String, _ session: String, _ patterns: [String], askedAt: Date? = nil
    ) -> PendingPermission {
        PendingPermission(
            id: id, sessionID: session, kind: "bash", patterns: patterns, directory: "/home/me/shop", askedAt: askedAt)
    }

    static func list(_ items: [PendingPermission], questions: [PendingQuestion] = []) -> PendingPermissionList {
        var list = PendingPermissionList(items: items)
        list.questions = questions
        return list
    }

    @Test(
        "a request told on the stream before the cut is not told again; one asked during the cut is told with its id, what it asks, how long ago; a second catch-up tells nothing; the stream's event after it tells nothing"
    )
    func toldOnce() throws {
        var watch = AgentSessionWatch()
        _ = watch.feed(
            OpenCodeEvent(
                data:
                    #"{"type":"session.updated","properties":{"sessionID":"s1","info":{"id":"s1","title":"Fix the login bug"}}}"#
            )!, now: 0)
        let live = watch.feed(
            OpenCodeEvent(
                data:
                    #"{"type":"permission.asked","properties":{"id":"per_1","sessionID":"s1","permission":"bash","patterns":["ls"]}}"#
            )!, now: 1)
        #expect(live.map(\.permissionID) == ["per_1"])
        watch.reconnected()

        let question = PendingQuestion.parse(
            Array(
                #"[{"id":"que_1","sessionID":"s2","questions":[{"question":"Which database?","header":"DB","options":[]}]}]"#
                    .utf8),
            generation: .one, directory: nil)!.items
        let pending = Self.list(
            [
                Self.permission("per_1", "s1", ["ls"]),
                Self.permission("per_2", "s1", ["git push"], askedAt: Self.now.addingTimeInterval(-180)),
            ],
            questions: question)
        let moments = watch.caughtUp(pending, at: Self.now)
        #expect(moments.map(\.kind) == [.permission, .permission], "\(moments)")
        #expect(moments.map(\.permissionID) == ["per_2", nil], "a question has no permission id")
        #expect(
            moments.first?.headline == "OpenCode asks for permission: Fix the login bug (shop)",
            "the title as the stream told it, the list's directory")
        #expect(moments.first?.message == "bash: git push (asked while you were away, 3 min ago)", "\(moments)")
        #expect(moments.first?.environment["OCTUNNEL_PERMISSION_ID"] == "per_2")
        #expect(moments.last?.message == "DB: Which database? (asked while you were away)", "\(moments)")
        #expect(watch.waitingCount == 3)

        #expect(
            watch.caughtUp(pending, at: Self.now.addingTimeInterval(60)).isEmpty, "a second cut tells nothing again")
        #expect(
            watch.feed(
                OpenCodeEvent(
                    data:
                        #"{"type":"permission.asked","properties":{"id":"per_2","sessionID":"s1","permission":"bash","patterns":["git push"]}}"#
                )!, now: 5
            ).isEmpty,
            "the same request on the stream after the catch-up")
        _ = watch.feed(
            OpenCodeEvent(
                data:
                    #"{"type":"permission.replied","properties":{"sessionID":"s1","requestID":"per_2","reply":"once"}}"#
            )!, now: 6)
        #expect(watch.waitingCount == 2)
    }

    @Test(
        "bounded and redacted: a hostile list of 100 requests with the password in what they ask tells at most 100, none with the password; the waiting count stays within its bound"
    )
    func bounded() throws {
        let secret = "hunter2-secret"
        var watch = AgentSessionWatch(secrets: [secret])
        let items = (0..<PendingPermissionList.limit).map {
            Self.permission("per_\($0)", "s\($0 % 7)", ["curl -u opencode:\(secret) x"])
        }
        let moments = watch.caughtUp(Self.list(items), at: Self.now)
        #expect(moments.count == PendingPermissionList.limit)
        #expect(
            moments.allSatisfy { !$0.line.contains(secret) && !$0.environment.values.contains { $0.contains(secret) } })
        #expect(watch.waitingCount == PendingPermissionList.limit)
        #expect(watch.caughtUp(Self.list(items), at: Self.now).isEmpty)
    }

    @Test("the directories the stream named, for 1.x's lists per project: sorted, each once, at most the limit")
    func directories() {
        var watch = AgentSessionWatch()
        for index in 0..<12 {
            _ = watch.feed(
                OpenCodeEvent(
                    data: #"{"directory":"/p/"# + String(index % 10)
                        + #"","payload":{"type":"session.status","properties":{"sessionID":"s"# + String(index)
                        + #"","status":{"type":"busy"}}}}"#)!, now: 0)
        }
        #expect(watch.directories() == ["/p/0", "/p/1", "/p/2", "/p/3", "/p/4", "/p/5", "/p/6", "/p/7"])
        #expect(watch.directories(limit: 100).count == 10)
    }

    @Test(
        "1.x: a session seen busy that /session/status no longer lists finished while away, told once; one still listed, one never busy, one of a directory not asked and a subagent are not"
    )
    func finishedWhileAway() throws {
        var watch = AgentSessionWatch()
        func feed(_ json: String) { _ = watch.feed(OpenCodeEvent(data: json)!, now: 0) }
        feed(
            #"{"type":"session.updated","properties":{"sessionID":"done","info":{"id":"done","title":"Fix the login bug"}}}"#
        )
        for id in ["done", "still", "elsewhere", "sub"] {
            feed(#"{"type":"session.status","properties":{"sessionID":""# + id + #"","status":{"type":"busy"}}}"#)
        }
        feed(#"{"type":"session.updated","properties":{"sessionID":"sub","info":{"id":"sub","parentID":"done"}}}"#)
        feed(#"{"type":"session.status","properties":{"sessionID":"idle","status":{"type":"idle"}}}"#)
        feed(
            #"{"directory":"/other","payload":{"type":"session.status","properties":{"sessionID":"elsewhere","status":{"type":"busy"}}}}"#
        )
        watch.reconnected()

        let working = try #require(
            watch.working(
                in: Array(#"{"still":{"type":"busy"},"x":{"type":"retry","attempt":1,"message":"m","next":2}}"#.utf8)))
        #expect(working == ["still", "x"])
        #expect(watch.working(in: Array("[1]".utf8)) == nil && watch.working(in: Array("{}".utf8)) == [])
        let moments = watch.caughtUp(working: [nil: working], at: Self.now)
        #expect(moments.map(\.sessionID) == ["done"], "\(moments)")
        #expect(
            moments.first?.line
                == "notify: OpenCode finished: Fix the login bug: the agent is done and waits for you (finished while you were away)"
        )
        #expect(watch.caughtUp(working: [nil: []], at: Self.now).map(\.sessionID) == ["still"], "no longer listed now")
        #expect(
            watch.caughtUp(working: [nil: [], "/other": []], at: Self.now).map(\.sessionID) == ["elsewhere"],
            "its directory asked at last")
        #expect(watch.caughtUp(working: [nil: [], "/other": []], at: Self.now).isEmpty, "nothing twice")
        _ = watch.feed(OpenCodeEvent(data: #"{"type":"session.idle","properties":{"sessionID":"done"}}"#)!, now: 1)
        #expect(watch.due(now: 9).isEmpty, "an idle after it is not a second finish")
    }
}
