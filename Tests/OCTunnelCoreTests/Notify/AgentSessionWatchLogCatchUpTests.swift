import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48 for OpenCode 2: the turns that ended while the stream was cut, from
/// `GET /api/session/active` and each session's durable log (`AgentSessionLog`), told once.
@Suite("the catch-up after a cut (2.x): turns that ended, from the active list and the session logs", .ownThreads)
struct AgentSessionWatchLogCatchUpTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// One 2.x event as the live stream sends it, with its log envelope.
    static func event(_ type: String, _ session: String, seq: Int, _ data: [String: Any] = [:]) -> String {
        let object: [String: Any] = [
            "id": "evt_\(seq)", "created": 1_799_999_000_000, "type": type,
            "durable": ["aggregateID": session, "seq": seq, "version": 1],
            "data": data.merging(["sessionID": session]) { $1 },
        ]
        return String(
            decoding: try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
    }

    /// A log read's body: the entries, then the synced marker at the last seq.
    static func log(
        _ session: String, _ entries: [(String, Int, [String: Any])], synced: Int? = nil,
        createdMs: Double = 1_799_999_880_000
    ) -> [UInt8] {
        var body = ""
        for (type, seq, data) in entries {
            let object: [String: Any] = [
                "id": "evt_\(seq)", "created": createdMs, "type": type,
                "durable": ["aggregateID": session, "seq": seq, "version": 1],
                "data": data.merging(["sessionID": session]) { $1 },
            ]
            body +=
                "data: " + String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self) + "\n\n"
        }
        var marker: [String: Any] = ["type": "log.synced", "aggregateID": session]
        if let seq = synced ?? entries.last?.1 { marker["seq"] = seq }
        body += "data: " + String(decoding: try! JSONSerialization.data(withJSONObject: marker), as: UTF8.self) + "\n\n"
        return Array(body.utf8)
    }

    @Test(
        "the log read: the last execution step past the seq asked, its time and message; the seq reached; a read without its marker, of another session's entries, or past 1 MiB says nothing"
    )
    func logRead() throws {
        let body = Self.log(
            "ses_b",
            [
                ("session.execution.started", 3, [:]), ("session.text.ended", 4, ["text": "hi"]),
                (
                    "session.execution.failed", 5,
                    ["error": ["type": "provider", "message": "rate limited \u{1b}[31m pw-1"]]
                ),
            ])
        let read = try #require(AgentSessionLog.parse(body, session: "ses_b", secrets: ["pw-1"]))
        #expect(read.seq == 5)
        #expect(read.last?.seq == 5 && read.last?.created == Date(timeIntervalSince1970: 1_799_999_880))
        guard case .failed(let message) = read.last?.step else { Issue.record("\(read)"); return }
        #expect(
            !message.contains("pw-1") && !message.contains("\u{1b}") && message.hasPrefix("rate limited"), "\(message)")
        #expect(
            AgentSessionLog.parse(Array(body.dropLast(60)), session: "ses_b") == nil, "cut before its synced marker")
        #expect(
            AgentSessionLog.parse(body, session: "ses_other")?.last == nil,
            "another session's entries are not this one's")
        #expect(
            AgentSessionLog.parse(Array(repeating: UInt8(ascii: " "), count: (1 << 20) + 1), session: "ses_b") == nil)
        #expect(AgentSessionLog.parse(Self.log("ses_b", [], synced: 9), session: "ses_b") == AgentSessionLog(seq: 9))
        let hostile = Array(
            "data: {\"type\":\"session.execution.succeeded\",\"durable\":{\"seq\":-1}}\n\ndata: {\"type\":\"session.execution.succeeded\",\"durable\":{\"seq\":1e300}}\n\ndata: {\"type\":\"log.synced\"}\n\n"
                .utf8)
        #expect(
            AgentSessionLog.parse(hostile, session: "ses_b") == AgentSessionLog(), "negative and huge seqs are skipped")
        #expect(
            ActiveAgentSessions.parse(Array(#"{"data":{"ses_a":{"type":"running"}},"watermarks":{"ses_a":3}}"#.utf8))
                == ["ses_a"])
        #expect(
            ActiveAgentSessions.parse(Array(#"{"data":[]}"#.utf8)) == nil
                && ActiveAgentSessions.parse(Array("<html>".utf8)) == nil)
    }

    @Test(
        "a session seen running that no longer runs: succeeded is told finished while away with how long ago, failed with its message, interrupted quietly; each once; one still active, one never seen working, a subagent and an entry told live are not told"
    )
    func endedWhileAway() throws {
        var watch = AgentSessionWatch(secrets: ["pw-1"])
        func feed(_ json: String) -> [AgentMoment] { watch.feed(OpenCodeEvent(data: json)!, now: 0) }
        _ = feed(
            #"{"type":"session.updated","data":{"sessionID":"ses_sub","info":{"id":"ses_sub","parentID":"ses_a"}}}"#)
        for session in ["ses_a", "ses_b", "ses_c", "ses_d", "ses_e", "ses_sub"] {
            #expect(feed(Self.event("session.execution.started", session, seq: 1)).isEmpty)
        }
        // ses_e ends on the stream before the cut: told then, and never again.
        #expect(feed(Self.event("session.execution.succeeded", "ses_e", seq: 2)).map(\.kind) == [.finished])
        watch.reconnected()

        let active: Set<String> = ["ses_d", "ses_new"]
        let asked = watch.logsToRead(active: active)
        #expect(Set(asked.map(\.session)) == ["ses_a", "ses_b", "ses_c", "ses_sub"], "\(asked)")
        #expect(asked.allSatisfy { $0.after == 1 }, "each after the seq seen on the stream")
        let logs: [String: AgentSessionLog] = [
            "ses_a": AgentSessionLog.parse(
                Self.log("ses_a", [("session.execution.succeeded", 2, [:])]), session: "ses_a")!,
            "ses_b": AgentSessionLog.parse(
                Self.log(
                    "ses_b", [("session.execution.failed", 2, ["error": ["type": "x", "message": "disk full pw-1"]])]),
                session: "ses_b")!,
            "ses_c": AgentSessionLog.parse(
                Self.log("ses_c", [("session.execution.interrupted", 2, ["reason": "user"])]), session: "ses_c")!,
            "ses_sub": AgentSessionLog.parse(
                Self.log("ses_sub", [("session.execution.succeeded", 2, [:])]), session: "ses_sub")!,
            // A stale read of ses_e: its end was told live (seq 2 seen).
            "ses_e": AgentSessionLog.parse(
                Self.log("ses_e", [("session.execution.succeeded", 2, [:])]), session: "ses_e")!,
        ]
        let moments = watch.caughtUp(active: active, logs: logs, at: Self.now)
        #expect(moments.map { "\($0.kind) \($0.sessionID)" } == ["finished ses_a", "failed ses_b"], "\(moments)")
        #expect(
            moments.first?.message == "the agent is done and waits for you (finished while you were away, 2 min ago)",
            "\(moments)")
        #expect(
            moments.last?.message.hasPrefix("disk full") == true
                && moments.last?.message.hasSuffix("(failed while you were away, 2 min ago)") == true
                && moments.last?.message.contains("pw-1") == false, "\(moments)")
        #expect(watch.caughtUp(active: active, logs: logs, at: Self.now).isEmpty, "told once")
        #expect(
            watch.logsToRead(active: []).map(\.session) == ["ses_d"],
            "a session the active list names is working; one never heard of stays unknown")
        #expect(
            feed(Self.event("session.execution.succeeded", "ses_a", seq: 2)).isEmpty,
            "the same entry on the stream again tells nothing")
    }

    @Test("bounded: at most the limit of logs read, route-safe ids only, the most recently heard of first")
    func bounded() {
        var watch = AgentSessionWatch()
        for index in 0..<20 {
            _ = watch.feed(
                OpenCodeEvent(data: Self.event("session.execution.started", "ses_\(index)", seq: 1))!, now: 0)
        }
        _ = watch.feed(OpenCodeEvent(data: Self.event("session.execution.started", "../etc", seq: 1))!, now: 0)
        let asked = watch.logsToRead(active: [], limit: 8)
        #expect(asked.map(\.session) == (12..<20).reversed().map { "ses_\($0)" }, "\(asked)")
    }
}
