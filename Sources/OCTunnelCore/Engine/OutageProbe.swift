import Foundation

/// How often a VPS that answers no connection at all is tried again, so that the tunnel is
/// back within about a second of the server's return, however long it was gone (the backoff
/// alone had reached its 30 s cap after a minute: served again 24-26 s late).
///
/// Such an attempt reaches no SSH server: the TCP connect was refused, found no host, or timed
/// out (that attempt has already waited its connect timeout). Not when this machine has no
/// route at all (offline): that is the backoff's, and a network change's (`reachedNoServer`).
/// sshd never saw such an attempt, so it counts towards no `PerSourcePenalties` (OpenSSH 9.8+
/// penalizes a source for the preauth children that end without authenticating, `noauth`,
/// sshd.c `child_reap`; a refused SYN starts no child). The attempt *is* the probe: once a
/// connect succeeds, the handshake goes on over that very socket, so no probe connection is
/// ever opened and closed before sshd's banner (that one would be a `noauth`). Attempts that
/// reach sshd and fail keep the exponential backoff (`ReconnectPolicy`).
///
/// Pure: the outage's start and `now` are given.
struct OutageProbe {
    /// The interval for the first half minute of an outage, for the next minutes, and after.
    static let intervals: [(until: Double, every: Double)] = [(30, 0.5), (300, 1), (.infinity, 2)]
    /// The interval varies by up to this fraction, so many tunnels do not knock in step.
    static let jitter = 0.1
    /// While it lasts, the outage is said at most this often (its first attempt always is).
    static let sayEvery = 10.0

    /// When the run of attempts that reached no server began, and when it was last said.
    private(set) var since: Double?
    private var saidAt = -Double.infinity

    /// Whether `error` means the attempt reached no SSH server at all (nothing sshd counts)
    /// while a route there exists. An attempt that found no route at all (ENETUNREACH,
    /// EADDRNOTAVAIL: an offline laptop) fails at once and would knock every 0.5 s for nothing:
    /// it keeps the backoff, and the network change that brings a route back retries at once
    /// (`ReconnectState.actWithoutSession`).
    static func reachedNoServer(_ error: any OCTunnelFailure) -> Bool {
        switch error.unboxed as? ConnectError {
        case .connectionRefused, .connectTimeout: return true
        case .unreachable(_, _, _, let noRoute): return !noRoute
        default: return false
        }
    }

    /// An attempt reached no server at `now`: the delay before the next, and whether to say so.
    mutating func failed(now: Double, random: Double) -> (delay: Double, say: Bool) {
        let start = since ?? now
        since = start
        let every = Self.intervals.first { now - start < $0.until }?.every ?? 2
        let say = now - saidAt >= Self.sayEvery
        if say { saidAt = now }
        return (every * (1 + Self.jitter * random), say)
    }

    /// Whether the next attempt is one of a run already said (its `connecting` line is not repeated).
    func isQuiet(now: Double) -> Bool { since != nil && now - saidAt < Self.sayEvery }

    /// An attempt reached the server (or a session came up): the outage is over.
    mutating func reset() {
        since = nil
        saidAt = -.infinity
    }
}
