import Foundation

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
            return cause == .requested ? "reconnect requested: reconnecting now" : "\(cause.headline): \(reason); reconnecting now"
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
