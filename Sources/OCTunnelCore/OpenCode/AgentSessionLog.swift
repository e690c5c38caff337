import Foundation

/// What one read of an OpenCode 2 session's durable log says about how its last turn ended:
/// `GET /api/session/:sessionID/log?after=SEQ` (packages/protocol/src/groups/session.ts
/// `session.log`, packages/server/src/handlers/session.ts), an SSE body of `data: <entry>` lines
/// that ends after a `{"type":"log.synced","aggregateID","seq"?}` marker (no `follow=true`). An
/// entry is `{"id","created" (ms),"type","durable":{"aggregateID","seq","version"},"data"}`
/// (packages/schema/src/event.ts `Event.durable`); the turn's ends are
/// `session.execution.succeeded` `{sessionID}`, `session.execution.failed`
/// `{sessionID, error: {type, message, status?}}` (packages/schema/src/session-event.ts,
/// session-error.ts) and `session.execution.interrupted` (a user's stop: no failure).
///
/// Hostile input is bounded input: a body past 1 MiB or without its synced marker is nil, at most
/// `entryLimit` entries are read, an entry of another session or with a negative or
/// non-integer seq is skipped, the message is cut and redacted (`OutsideText.shown`).
public struct AgentSessionLog: Sendable, Equatable {
    /// How a turn's execution stood at an entry.
    public enum Step: Sendable, Equatable {
        case started, succeeded, interrupted
        case failed(message: String)
    }

    /// The last execution step the read holds, its seq and when it was committed.
    public struct LastStep: Sendable, Equatable {
        public let step: Step
        public let seq: Int
        public let created: Date?
    }

    /// The highest seq the read reached (an entry's, or the synced marker's); nil when the log holds none.
    public var seq: Int?
    /// The last execution step among the entries read.
    public var last: LastStep?

    /// Entries read from one body at most; the rest are not looked at.
    public static let entryLimit = 10_000
    /// The largest seq believed (2⁵³, JSON's exact integers).
    static let seqLimit = 1 << 53

    public init(seq: Int? = nil, last: LastStep? = nil) {
        (self.seq, self.last) = (seq, last)
    }

    /// The read of `session`'s log in `body`; nil for a body that is not one.
    public static func parse(_ body: [UInt8], session: String, secrets: [String] = []) -> AgentSessionLog? {
        guard body.count <= 1 << 20 else { return nil }
        var read = AgentSessionLog()
        var entries = 0
        var synced = false
        for line in body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        where entries < entryLimit {
            guard line.starts(with: Array("data:".utf8)) else { continue }
            entries += 1
            let json = line.dropFirst(5).drop { $0 == UInt8(ascii: " ") }
            guard let entry = try? JSONDecoder().decode(Entry.self, from: Data(json)), let type = entry.type else {
                continue
            }
            if type == "log.synced" || type == "log.caught_up" {
                guard entry.aggregateID.map({ $0 == session }) ?? true else { continue }
                synced = true
                if let seq = entry.seq?.value { read.seq = max(read.seq ?? seq, seq) }
                continue
            }
            guard let durable = entry.durable, let seq = durable.seq?.value,
                durable.aggregateID.map({ $0 == session }) ?? true
            else {
                continue
            }
            read.seq = max(read.seq ?? seq, seq)
            guard let step = Self.step(type, entry.data, secrets: secrets) else { continue }
            guard read.last.map({ $0.seq <= seq }) ?? true else { continue }
            let created = entry.created.flatMap { $0.isFinite && $0 > 0 && $0 < 1e15 ? $0 : nil }
            read.last = LastStep(step: step, seq: seq, created: created.map { Date(timeIntervalSince1970: $0 / 1000) })
        }
        // A read that never reached its marker may have been cut short: how it ended is not known.
        return synced ? read : nil
    }

    /// One `data:` entry of the log: `{"type","created","durable":{"aggregateID","seq"},"data"}`, or
    /// the synced marker `{"type":"log.synced","aggregateID","seq"?}`.
    private struct Entry: Decodable {
        @LenientField var type: String?
        @LenientField var aggregateID: String?
        @LenientField var created: Double?
        @LenientField var seq: LogSeq?
        @LenientField var durable: Durable?
        @LenientField var data: Failure?
    }

    /// `durable`: which session's log, and where in it.
    private struct Durable: Decodable {
        @LenientField var aggregateID: String?
        @LenientField var seq: LogSeq?
    }

    /// `session.execution.failed`'s data: `{sessionID, error: {type, message, status?}}` (or an older `message`).
    private struct Failure: Decodable {
        @LenientField var message: String?
        @LenientField var error: OpenCodeEvent.Fields.ErrorField?
    }

    private static func step(_ type: String, _ data: Failure?, secrets: [String]) -> Step? {
        switch type {
        case "session.execution.started": return .started
        case "session.execution.succeeded": return .succeeded
        case "session.execution.interrupted": return .interrupted
        case "session.execution.failed":
            let message = data?.error?.message ?? data?.message ?? "the turn failed"
            return .failed(message: OutsideText.shown(message, secrets: secrets, limit: 512))
        default: return nil
        }
    }
}
