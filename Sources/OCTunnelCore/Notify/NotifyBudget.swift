import Foundation

/// Which moments are told now, and which wait to be told together as one "+N more" notice: a
/// broken or hostile home can send thousands of requests a second, and each moment told costs a
/// line, a program and a desktop notification (issue 48). Per kind, a bucket of `burst` moments
/// refilled one every `refill` seconds; a moment that finds its kind's bucket empty, or no room
/// in the notifier's queue, or moments of its kind already held, is held; the held moments of a
/// kind go as one notice once the bucket has one again (`release`). Pure: the time is given.
struct NotifyBudget: Sendable {
    let burst: Double
    let refill: Double
    private var buckets: [AgentMoment.Kind: Bucket] = [:]
    private var held: [AgentMoment.Kind: Held] = [:]

    /// Distinct sessions counted per held kind (the "and N other sessions").
    static let sessionsCounted = 1000

    private struct Bucket {
        var tokens: Double
        var at: Double
    }

    private struct Held {
        var first: AgentMoment
        var count = 1
        var sessions: Set<String>
    }

    init(burst: Int = 8, refill: Double = 4) {
        self.burst = Double(burst)
        self.refill = refill
    }

    /// `moment` when it is told now (a token taken), nil when it is held; `room`: whether the
    /// notifier can take one more.
    mutating func admit(_ moment: AgentMoment, now: Double, room: Bool) -> AgentMoment? {
        if held[moment.kind] == nil, room, take(moment.kind, now: now) { return moment }
        if var waiting = held[moment.kind] {
            waiting.count += 1
            if waiting.sessions.count < Self.sessionsCounted { waiting.sessions.insert(moment.sessionID) }
            held[moment.kind] = waiting
        } else {
            held[moment.kind] = Held(first: moment, sessions: [moment.sessionID])
        }
        return nil
    }

    /// The held moments whose bucket has a token again by `now`, one notice per kind (the moment
    /// itself when only one was held), at most `room` of them.
    mutating func release(now: Double, room: Int) -> [AgentMoment] {
        var notices: [AgentMoment] = []
        for kind in AgentMoment.Kind.allCases where notices.count < room {
            guard let waiting = held[kind], take(kind, now: now) else { continue }
            held[kind] = nil
            guard waiting.count > 1 else {
                notices.append(waiting.first)
                continue
            }
            let first = waiting.first
            var notice = AgentMoment(
                kind: kind, sessionID: first.sessionID, title: first.title, directory: first.directory, detail: nil,
                at: first.at)
            notice.merged = AgentMoment.Merged(count: waiting.count, otherSessions: waiting.sessions.count - 1)
            notices.append(notice)
        }
        return notices
    }

    /// When a held notice may go (its bucket has a token; the queue's room aside); nil when
    /// nothing is held.
    func nextRelease(now: Double) -> Double? {
        held.keys.map { kind in
            let tokens = self.tokens(kind, now: now)
            return tokens >= 1 ? now : now + (1 - tokens) * refill
        }.min()
    }

    /// How many moments are held.
    var heldCount: Int { held.values.reduce(0) { $0 + $1.count } }

    private func tokens(_ kind: AgentMoment.Kind, now: Double) -> Double {
        guard let bucket = buckets[kind] else { return burst }
        return min(burst, bucket.tokens + max(0, now - bucket.at) / refill)
    }

    private mutating func take(_ kind: AgentMoment.Kind, now: Double) -> Bool {
        let tokens = self.tokens(kind, now: now)
        guard tokens >= 1 else { return false }
        buckets[kind] = Bucket(tokens: tokens - 1, at: now)
        return true
    }
}
