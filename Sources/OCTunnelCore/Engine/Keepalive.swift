/// Whether a session is still alive, without `libssh2_keepalive_send` (which never reports a
/// dead peer, leaks its replies in 1.10.0, and would spoil a remote forward's listen reply):
/// every `interval` a `setenv` request on the idle `session` channel, which the server must
/// answer (accepted or refused, both count). Any inbound byte proves life; none for
/// 3 × interval + 1 s means the session is dead.
struct Keepalive {
    let interval: Double
    private(set) var lastInbound: Double
    private var nextProbe: Double
    /// A probe was sent and not answered yet: the same call is continued, no new one sent.
    private(set) var isOutstanding = false
    /// A quick probe (`probeNow`): asked at `since`, it must be answered by `deadline`.
    private(set) var quickProbe: (since: Double, deadline: Double)?

    init(interval: Double, now: Double) {
        self.interval = interval
        lastInbound = now
        nextProbe = now + interval
    }

    /// How long a session may stay silent before it is declared dead.
    var deadAfter: Double { interval * 3 + 1 }

    /// The next time `check` has something to do.
    var nextDeadline: Double { min(nextProbe, lastInbound + deadAfter, quickProbe?.deadline ?? .infinity) }

    /// Whether the session is in doubt: a quick probe waits for its answer.
    var isProbing: Bool { quickProbe != nil }

    /// Asks the server for an answer now (a probe goes out at the next `check`, or the one
    /// already outstanding counts): any byte heard after `now` and by `deadline` proves the
    /// session alive; none means it is dead, without waiting for `deadAfter`. A probe already
    /// under way keeps the earlier deadline.
    mutating func probeNow(now: Double, deadline: Double) {
        if let quickProbe, quickProbe.deadline <= deadline { return }
        quickProbe = (now, deadline)
        nextProbe = min(nextProbe, now)
    }

    /// Whether nothing was heard from the server for longer than one interval (a client
    /// arriving then gets a quick probe: the session may have died unnoticed).
    func isQuiet(now: Double) -> Bool { now - lastInbound > interval }

    /// Something came from the server (`LiveSession.noteInbound` is the one caller in the engine).
    mutating func heard(at now: Double) { lastInbound = max(lastInbound, now) }

    enum Verdict: Equatable {
        case alive
        /// No inbound bytes for this many seconds.
        case silent(Int)
        /// The probe failed with a session-level libssh2 error.
        case failed(Int32)
        /// The quick probe was answered, this many seconds after it was asked.
        case answered(Double)
        /// The quick probe went unanswered for this many seconds.
        case unanswered(Double)
    }

    /// Declares the session dead, or sends (or continues) a probe when one is due.
    mutating func check(now: Double, channel: any EngineChannel) -> Verdict {
        check(now: now) { channel.probe(setenv: "OCTUNNEL_KEEPALIVE", value: "1") }
    }

    /// `check` with the probe's send given as `send` (tests pass their own).
    mutating func check(now: Double, send: () -> StepResult) -> Verdict {
        if let quick = quickProbe {
            if lastInbound > quick.since {
                quickProbe = nil
                return .answered(lastInbound - quick.since)
            }
            if now >= quick.deadline {
                quickProbe = nil
                return .unanswered(now - quick.since)
            }
        }
        if now - lastInbound > deadAfter { return .silent(Int(now - lastInbound)) }
        guard isOutstanding || now >= nextProbe else { return .alive }
        if !isOutstanding { nextProbe = now + interval }
        switch send() {
        case .wouldBlock:
            isOutstanding = true
        case .done:
            // Its answer was read from the socket: `LiveSession.noteInbound` counts it.
            isOutstanding = false
        case .failed(let code):
            return .failed(code)
        }
        return .alive
    }
}
