import Foundation

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
/// was asked for, or after a network change that moved the route to the VPS to another of the
/// machine's addresses while the session's own is still there (the old path works: a new
/// session is made before the old one breaks); otherwise probe the session with a short deadline.
enum RoamingDecision: Equatable {
    case probe(deadline: Double)
    case reconnect(ReconnectReason)

    /// The quick probe's allowance: a few round trips as the kernel measured them, at least 1 s.
    static func probeWindow(roundTrip: Double?) -> Double { max(1.0, 4 * (roundTrip ?? 0)) }

    /// `localAddress` is the session socket's address; `addresses` the machine's now (nil when
    /// unknown: then only a probe can tell); `preferredSource` the address a new connection to
    /// the VPS would leave from now (nil when unknown, or when the forwards cannot overlap two
    /// sessions: then a probe keeps the session that works).
    static func decide(
        _ cause: RoamingCause, localAddress: String?, addresses: Set<String>?, preferredSource: String? = nil,
        roundTrip: Double?, now: Double
    ) -> RoamingDecision {
        if cause == .requested { return .reconnect(.requested) }
        let local = localAddress.map(unmapped)
        if let local, let addresses, !addresses.contains(local) {
            return .reconnect(.addressGone(local))
        }
        if case .networkChange = cause, let local, let preferred = preferredSource.map(unmapped), preferred != local {
            return .reconnect(.routeMoved(from: local, to: preferred))
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
    /// A new connection to the VPS would leave from `to` now, not from the session's `from`
    /// (still there: the old path works while the new session comes up).
    case routeMoved(from: String, to: String)

    /// "reconnect requested", "the session's address 10.0.0.1 is gone", …
    public var text: String {
        switch self {
        case .requested: return "reconnect requested"
        case .addressGone(let address): return "the session's address \(address) is gone"
        case .routeMoved(let from, let to):
            return "the route to the VPS now leaves from \(to), not the session's \(from)"
        }
    }

    /// Whether the session's path still works, so a new session can be made before it breaks.
    public var oldPathWorks: Bool {
        switch self {
        case .requested, .routeMoved: return true
        case .addressGone: return false
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
        case .clientAfterSilence(let seconds):
            return "a client came after \(RoamingEvent.seconds(seconds)) without a word from the VPS"
        case .requested: return "reconnect requested"
        }
    }
}

/// What roaming tells its user, as data (`EngineEvent.roaming`).
public enum RoamingEvent: Sendable {
    /// The session is being probed with a short deadline.
    case probing(RoamingCause, deadline: Double)
    /// The session is dropped at once, for `reason`, and a new one started.
    case reconnectingNow(RoamingCause, reason: String)
    /// The probe was answered: the session stays.
    case kept(RoamingCause, answeredIn: Double)
    /// A new session is up this many seconds after `cause` was noticed.
    case reconnected(RoamingCause, after: Double)
}

extension RoamingEvent {
    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }

    /// One human line.
    public var text: String {
        switch self {
        case .probing(let cause, let deadline):
            return "\(cause.headline): probing the session (answer within \(Self.seconds(deadline)))"
        case .reconnectingNow(let cause, let reason):
            return cause == .requested
                ? "reconnect requested: reconnecting now" : "\(cause.headline): \(reason); reconnecting now"
        case .kept(let cause, let seconds):
            return "the session answered in \(Self.seconds(seconds)) after \(cause.noun): kept"
        case .reconnected(let cause, let seconds):
            return "reconnected \(Self.seconds(seconds)) after \(cause.noun)"
        }
    }

    /// The event as a JSON object (`event` names the step, `cause` why).
    public var jsonObject: [String: Any] {
        func round(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        func base(_ event: String, _ cause: RoamingCause, _ status: String) -> [String: Any] {
            var object: [String: Any] = ["event": event, "status": status, "cause": cause.tag, "message": text]
            switch cause {
            case .networkChange(let detail): object["detail"] = detail
            case .wake(let seconds), .clientAfterSilence(let seconds): object["quietSeconds"] = round(seconds)
            case .requested: break
            }
            return object
        }
        switch self {
        case .probing(let cause, let deadline):
            return base("probing", cause, "connected").merging(["deadline": round(deadline)]) { $1 }
        case .reconnectingNow(let cause, let reason):
            return base("reconnectingNow", cause, "connecting").merging(["reason": reason]) { $1 }
        case .kept(let cause, let seconds):
            return base("probeAnswered", cause, "connected").merging(["seconds": round(seconds)]) { $1 }
        case .reconnected(let cause, let seconds):
            return base("reconnected", cause, "connected").merging(["seconds": round(seconds)]) { $1 }
        }
    }
}
