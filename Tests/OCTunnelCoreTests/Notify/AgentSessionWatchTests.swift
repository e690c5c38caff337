import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// OpenCode's events turned into the three moments (issue 40), for 1.x's and 2.x's shapes.
@Suite("the agent's moments from OpenCode's events: finished, permission, failed", .ownThreads)
struct AgentSessionWatchTests {
    static func one(_ json: String) -> OpenCodeEvent { OpenCodeEvent(data: json)! }
    static func two(_ type: String, _ data: String) -> OpenCodeEvent {
        one(#"{"id":"evt_1","type":""# + type + #"","data":"# + data + "}")
    }
    /// A watch that was fed `events`, each at its time.
    static func watch(after events: [(OpenCodeEvent, Double)]) -> AgentSessionWatch {
        var watch = AgentSessionWatch()
        for (event, now) in events { _ = watch.feed(event, now: now) }
        return watch
    }
    /// 1.x's session.status of `session`, `type` "busy" or "idle".
    static func status(_ session: String, _ type: String) -> OpenCodeEvent {
        one(#"{"type":"session.status","properties":{"sessionID":"\#(session)","status":{"type":"\#(type)"}}}"#)
    }
    /// 1.x's session.error of `session`: the error's `name` and its message.
    static func error(_ session: String, _ name: String, _ message: String) -> OpenCodeEvent {
        one(
            #"{"type":"session.error","properties":{"sessionID":"\#(session)","error":{"name":"\#(name)","data":{"message":"\#(message)"}}}}"#
        )
    }
    /// 1.x's message.part.updated for the tool call `call` of `session`, its state `status`.
    static func tool(_ session: String, _ call: String, _ status: String) -> OpenCodeEvent {
        one(
            #"{"type":"message.part.updated","properties":{"part":{"type":"tool","callID":"\#(call)","sessionID":"\#(session)","state":{"status":"\#(status)"}}}}"#
        )
    }

    @Test(
        "finished: idle after busy, once (status idle and the deprecated session.idle after it), named by title and directory; an idle never preceded by busy on this stream is nothing"
    )
    func finished() {
        var watch = AgentSessionWatch()
        #expect(
            watch.feed(
                Self.one(
                    #"{"type":"session.updated","properties":{"sessionID":"s1","info":{"id":"s1","title":"Fix the login bug","directory":"/home/me/app"}}}"#
                ), now: 0
            ).isEmpty)
        #expect(
            watch.feed(Self.status("s1", "idle"), now: 0.1).isEmpty)
        #expect(watch.due(now: 5).isEmpty, "idle without busy first: before this stream, or an abort of nothing")
        _ = watch.feed(Self.status("s1", "busy"), now: 1)
        _ = watch.feed(Self.status("s1", "idle"), now: 2)
        _ = watch.feed(Self.one(#"{"type":"session.idle","properties":{"sessionID":"s1"}}"#), now: 2.01)
        #expect(watch.due(now: 2.3).isEmpty, "within the settle time")
        let moments = watch.due(now: 2.6)
        #expect(moments.count == 1)
        #expect(
            moments.first?.kind == .finished && moments.first?.headline == "OpenCode finished: Fix the login bug (app)")
        #expect(watch.due(now: 9).isEmpty)
        #expect(
            watch.feed(Self.one(#"{"type":"session.idle","properties":{"sessionID":"s1"}}"#), now: 9).isEmpty
                && watch.due(now: 10).isEmpty)
    }

    @Test(
        "still running: an idle that flashes by while a tool runs, or followed by deltas within the settle time, is not finished; the real end is"
    )
    func stillRunning() {
        var watch = Self.watch(after: [
            (Self.status("s", "busy"), 0), (Self.tool("s", "c1", "running"), 0.1), (Self.status("s", "idle"), 0.2),
        ])
        #expect(watch.due(now: 3).isEmpty, "a tool still runs")
        _ = watch.feed(Self.tool("s", "c1", "completed"), now: 3.1)
        _ = watch.feed(Self.status("s", "idle"), now: 3.2)
        _ = watch.feed(
            Self.one(
                #"{"type":"message.part.delta","properties":{"sessionID":"s","messageID":"m","partID":"p","field":"text","delta":"more"}}"#
            ), now: 3.4)
        #expect(watch.due(now: 4).isEmpty, "deltas after the idle: still working")
        _ = watch.feed(Self.status("s", "idle"), now: 5)
        #expect(watch.due(now: 5.6).map(\.kind) == [.finished])
    }

    @Test("subagent sessions (a parentID) never finish alone; their permission requests do count")
    func subagents() {
        var watch = AgentSessionWatch()
        _ = watch.feed(
            Self.one(
                #"{"type":"session.updated","properties":{"sessionID":"child","info":{"id":"child","parentID":"root","title":"explore"}}}"#
            ), now: 0)
        _ = watch.feed(Self.status("child", "busy"), now: 0)
        _ = watch.feed(Self.status("child", "idle"), now: 1)
        #expect(watch.due(now: 5).isEmpty)
        let asked = watch.feed(
            Self.one(
                #"{"type":"permission.asked","properties":{"id":"per_1","sessionID":"child","permission":"bash","patterns":["git push"],"metadata":{},"always":[]}}"#
            ), now: 6)
        #expect(asked.map(\.kind) == [.permission] && asked.first?.message == "bash: git push")
    }

    @Test(
        "permission: each request once, whatever its shape (1.x updated with a title, asked, 2.x v2 with a reason, a question), even sent again after a reconnect"
    )
    func permission() {
        var watch = AgentSessionWatch()
        let old = watch.feed(
            Self.one(
                #"{"type":"permission.updated","properties":{"id":"p1","type":"edit","pattern":"src/a.swift","sessionID":"s","messageID":"m","title":"Edit src/a.swift","metadata":{},"time":{"created":1}}}"#
            ), now: 0)
        #expect(old.first?.message == "Edit src/a.swift")
        #expect(
            watch.feed(
                Self.one(
                    #"{"type":"permission.updated","properties":{"id":"p1","type":"edit","sessionID":"s","title":"Edit src/a.swift"}}"#
                ), now: 1
            ).isEmpty)
        watch.reconnected()
        #expect(
            watch.feed(
                Self.one(
                    #"{"type":"permission.asked","properties":{"id":"p1","sessionID":"s","permission":"edit","patterns":["src/a.swift"]}}"#
                ), now: 2
            ).isEmpty)
        let v2 = watch.feed(
            Self.two(
                "permission.v2.asked",
                #"{"id":"p2","sessionID":"s","action":"bash","resources":["rm -rf build"],"reason":"Run rm -rf build"}"#
            ), now: 3)
        #expect(v2.first?.message == "Run rm -rf build")
        let question = watch.feed(
            Self.one(
                #"{"type":"question.asked","properties":{"id":"q1","sessionID":"s","questions":[{"question":"Which database?","header":"DB","options":[]}]}}"#
            ), now: 4)
        #expect(question.first?.kind == .permission && question.first?.message == "Which database?")
    }

    @Test(
        "failed: session.error with the error's name and message, once; a user's abort and a context overflow are not failures; 2.x's execution.failed"
    )
    func failed() {
        // Each event in turn and what it tells: the one failure of its kind, said once; nothing for the rest.
        let fed: [(event: OpenCodeEvent, told: [String])] = [
            (
                Self.one(
                    #"{"type":"session.error","properties":{"sessionID":"s","error":{"name":"APIError","data":{"message":"rate limited","isRetryable":false}}}}"#
                ), ["APIError: rate limited"]
            ),
            (Self.error("s", "APIError", "rate limited"), []),
            (Self.error("s", "MessageAbortedError", "aborted"), []),
            (Self.error("s", "ContextOverflowError", "too long"), []),
            (
                Self.two("session.execution.failed", #"{"sessionID":"s2","type":"provider","message":"no credits"}"#),
                ["no credits"]
            ),
        ]
        var watch = AgentSessionWatch()
        for (index, (event, told)) in fed.enumerated() {
            let moments = watch.feed(event, now: Double(index))
            #expect(moments.map(\.message) == told, "event \(index)")
            #expect(moments.allSatisfy { $0.kind == .failed }, "event \(index)")
        }
    }

    @Test(
        "2.x: the turn's end (session.execution.succeeded) after work is finished at once; 2.x's envelope read; /global/event's directory kept"
    )
    func twoAndGlobal() {
        var watch = AgentSessionWatch()
        _ = watch.feed(Self.two("session.status", #"{"sessionID":"s","status":{"type":"busy"}}"#), now: 0)
        #expect(
            watch.feed(Self.two("session.execution.succeeded", #"{"sessionID":"s"}"#), now: 1).map(\.kind) == [
                .finished
            ])
        #expect(watch.due(now: 5).isEmpty)
        var global = AgentSessionWatch()
        _ = global.feed(
            Self.one(
                #"{"directory":"/home/me/site","payload":{"type":"session.status","properties":{"sessionID":"g","status":{"type":"busy"}}}}"#
            ), now: 0)
        _ = global.feed(
            Self.one(
                #"{"directory":"/home/me/site","payload":{"type":"session.status","properties":{"sessionID":"g","status":{"type":"idle"}}}}"#
            ), now: 1)
        #expect(global.due(now: 2).first?.directory == "/home/me/site")
    }

    @Test("an event that names an empty session is no moment (FuzzSessionWatch, in its first two minutes)")
    func emptySession() {
        var watch = AgentSessionWatch()
        #expect(
            watch.feed(
                data:
                    #"{"type":"permission.updated","properties":{"id":"p1","type":"edit","sessionID":"","title":"Edit a.swift"}}"#,
                now: 0
            ).isEmpty)
        #expect(
            watch.feed(
                data: #"{"type":"session.error","properties":{"sessionID":"","error":{"name":"APIError"}}}"#, now: 0
            ).isEmpty)
    }

    @Test(
        "a title full of escape codes and bidirectional controls is shown escaped everywhere: the line, the headline, the command's environment"
    )
    func hostileTitle() {
        var watch = AgentSessionWatch()
        _ = watch.feed(
            Self.one(
                #"{"type":"session.updated","properties":{"sessionID":"s","info":{"id":"s","title":"\u001b]0;pwned\u0007\u001b[2Jok\u202e"}}}"#
            ), now: 0)
        _ = watch.feed(Self.status("s", "busy"), now: 0)
        _ = watch.feed(Self.status("s", "idle"), now: 1)
        let moment = watch.due(now: 2).first!
        for text in [moment.line, moment.headline] + Array(moment.environment.values) {
            #expect(
                !text.unicodeScalars.contains {
                    $0.value < 0x20 || $0.value == 0x7F || (0x202A...0x202E).contains($0.value)
                }, "\(text.debugDescription)")
        }
    }

    @Test(
        "a reconnect between busy and idle (the VPS restarted, the laptop moved): finished once after it, a tool whose end was missed holds nothing back; what was told before is not told again, nor an idle whose busy came before a finish"
    )
    func acrossAReconnect() {
        let asked = Self.one(
            #"{"type":"permission.asked","properties":{"id":"p1","sessionID":"s","permission":"bash","patterns":["make"]}}"#
        )
        var watch = Self.watch(after: [
            (Self.status("s", "busy"), 0), (Self.tool("s", "c1", "running"), 0.1), (asked, 0.2),
        ])
        watch.reconnected()
        #expect(watch.feed(asked, now: 5).isEmpty, "the same request sent again after the reconnect")
        _ = watch.feed(Self.status("s", "idle"), now: 6)
        #expect(watch.due(now: 7).map(\.kind) == [.finished])
        watch.reconnected()
        _ = watch.feed(Self.status("s", "idle"), now: 8)
        #expect(watch.due(now: 9).isEmpty)
    }
}
