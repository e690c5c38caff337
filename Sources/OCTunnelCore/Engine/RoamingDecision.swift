/// Why the driver looked at a healthy-seeming session out of turn.
public enum RoamingCause: Sendable, Equatable {
    /// The kernel announced address or route changes (a summary of them).
    case networkChange(String)
    /// The process slept this many seconds (overslept poll, or suspend).
    case wake(Double)
    /// A client arrived after this many seconds without a byte from the VPS.
    case clientAfterSilence(Double)
    /// `octunnel tunnel reconnect` / `home reconnect`, or SIGUSR1.
    case requested
}

/// What to do about a `RoamingCause`, decided from facts the driver gathers (pure, so tests
/// give their own): reconnect at once when the session's own address is gone or a reconnect
/// was asked for; otherwise probe the session with a short deadline.
enum RoamingDecision: Equatable {
    case probe(deadline: Double)
    case reconnect(ReconnectReason)

    /// The quick probe's allowance: a few round trips as the kernel measured them, at least 1 s.
    static func probeWindow(roundTrip: Double?) -> Double { max(1.0, 4 * (roundTrip ?? 0)) }

    /// `localAddress` is the session socket's address; `addresses` the machine's now (nil when
    /// unknown: then only a probe can tell).
    static func decide(_ cause: RoamingCause, localAddress: String?, addresses: Set<String>?,
                       roundTrip: Double?, now: Double) -> RoamingDecision {
        if cause == .requested { return .reconnect(.requested) }
        if let local = localAddress.map(unmapped), let addresses, !addresses.contains(local) {
            return .reconnect(.addressGone(local))
        }
        return .probe(deadline: now + probeWindow(roundTrip: roundTrip))
    }

    /// `::ffff:10.0.0.1` as `10.0.0.1` (an IPv6 socket talking IPv4).
    static func unmapped(_ address: String) -> String {
        address.hasPrefix("::ffff:") && address.contains(".") ? String(address.dropFirst(7)) : address
    }
}

/// Why roaming drops a session at once instead of probing it.
public enum ReconnectReason: Sendable, Equatable {
    /// `octunnel tunnel reconnect` / `home reconnect`, or SIGUSR1.
    case requested
    /// The session socket's local address is no longer among the machine's.
    case addressGone(String)

    /// "reconnect requested", "the session's address 10.0.0.1 is gone".
    public var text: String {
        switch self {
        case .requested: return "reconnect requested"
        case .addressGone(let address): return "the session's address \(address) is gone"
        }
    }
}

extension RoamingCause {
    /// "a network change", "a wake from sleep", …: what the event lines say happened.
    public var noun: String {
        switch self {
        case .networkChange: return "a network change"
        case .wake: return "a wake from sleep"
        case .clientAfterSilence: return "a client after a silence"
        case .requested: return "a reconnect request"
        }
    }

    /// The JSON `cause` tag.
    public var tag: String {
        switch self {
        case .networkChange: return "networkChange"
        case .wake: return "wake"
        case .clientAfterSilence: return "clientAfterSilence"
        case .requested: return "requested"
        }
    }

    /// "network changed (address 10.1.2.3 removed)", "woke after 20.0 s asleep", …
    public var headline: String {
        switch self {
        case .networkChange(let detail): return "network changed (\(detail))"
        case .wake(let seconds): return "woke after \(RoamingEvent.seconds(seconds)) asleep"
        case .clientAfterSilence(let seconds): return "a client came after \(RoamingEvent.seconds(seconds)) without a word from the VPS"
        case .requested: return "reconnect requested"
        }
    }
}
