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

    init(interval: Double, now: Double) {
        self.interval = interval
        lastInbound = now
        nextProbe = now + interval
    }

    /// How long a session may stay silent before it is declared dead.
    var deadAfter: Double { interval * 3 + 1 }

    /// The next time `check` has something to do.
    var nextDeadline: Double { min(nextProbe, lastInbound + deadAfter) }

    /// Something came from the server.
    mutating func heard(at now: Double) { lastInbound = max(lastInbound, now) }

    enum Verdict: Equatable {
        case alive
        /// No inbound bytes for this many seconds.
        case silent(Int)
        /// The probe failed with a session-level libssh2 error.
        case failed(Int32)
    }

    /// Declares the session dead, or sends (or continues) a probe when one is due.
    mutating func check(now: Double, channel: SSHChannel) -> Verdict {
        if now - lastInbound > deadAfter { return .silent(Int(now - lastInbound)) }
        guard isOutstanding || now >= nextProbe else { return .alive }
        if !isOutstanding { nextProbe = now + interval }
        switch channel.probe(setenv: "OCTUNNEL_KEEPALIVE", value: "1") {
        case .wouldBlock:
            isOutstanding = true
        case .done:
            isOutstanding = false
            heard(at: now)
        case .failed(let code):
            return .failed(code)
        }
        return .alive
    }
}
