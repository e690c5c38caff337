import Foundation

/// Why a session ended, or why an attempt to start one failed: what `LiveSession` is failed
/// with, what the forwards are told (`sessionEnded`, `stop`), what `SessionRecord` keeps for
/// `status`, and what the `disconnected` and `stopping` events carry. It becomes words only
/// where it is printed (`text`), and those words are the ones users and tests read.
public enum SessionEnd: Sendable, Equatable, CustomStringConvertible {
    /// Nothing came from the VPS for this many seconds (keepalive: 3 intervals and 1 s).
    case silence(seconds: Int)
    /// A quick probe went unanswered this many seconds after it was asked, for a roaming
    /// cause (nil: none recorded; said as a network change).
    case unansweredProbe(seconds: Double, after: RoamingCause?)
    /// The SSH socket refused what libssh2 sent (`send`'s error, as `BatchedSocketIO` says it).
    case sendFailed(String)
    /// A libssh2 call failed at session level: the VPS closed or reset the connection, or it
    /// broke. `message` is libssh2's own, read when the call failed (empty when it had none).
    case vpsClosed(code: Int32, message: String)
    /// A network change, a wake, a client after a silence or a reconnect request made the
    /// session go at once (`RoamingDecision`), for `reason`.
    case roamed(RoamingCause, ReconnectReason)
    /// A request the forward cannot do without failed (a remote listen), as libssh2 described it.
    case requestFailed(String)
    /// A make-before-break reconnect: a new session took over.
    case replaced
    /// A stop request, SIGINT or SIGTERM: the graceful goodbye.
    case stopped
    /// A connection attempt failed before any session was up.
    case attemptFailed(AnyFailure)
    /// The attempt met the same refusal that ends by itself as the one before (a penalizing
    /// sshd, `OCTunnelFailure.passesByItself`): named in full once, then only this.
    case stillClosedBeforeGreeting

    /// One human line: what `disconnected: …`, `stopping: …` and `status` say.
    public var text: String {
        switch self {
        case .silence(let seconds): return "no answer from the VPS for \(seconds) s (keepalive)"
        case .unansweredProbe(let seconds, let cause):
            return
                "no answer to a probe within \(String(format: "%.1f", seconds)) s after \(cause?.noun ?? "a network change")"
        case .sendFailed(let detail): return "connection to VPS lost (send: \(detail))"
        case .vpsClosed(let code, let message):
            return "connection to VPS lost (\(message.isEmpty ? "libssh2 error \(code)" : message))"
        case .roamed(let cause, let reason): return "\(cause.headline): \(reason.text)"
        case .requestFailed(let detail): return detail
        case .replaced: return "replaced by a new session"
        case .stopped: return "octunnel stopped"
        case .attemptFailed(let error): return error.localizedDescription
        case .stillClosedBeforeGreeting: return "still closed before its SSH greeting (see above)"
        }
    }

    public var description: String { text }

    /// Whether the next attempt starts at once, with the backoff started over: the session was
    /// dropped because of roaming (its address gone, a request, an unanswered quick probe).
    var retriesAtOnce: Bool {
        switch self {
        case .roamed, .unansweredProbe: return true
        default: return false
        }
    }

    /// What each open connection is told when the run ends for this reason: nothing on a
    /// clean stop (its socket is just closed).
    var connectionNotice: String? { self == .stopped ? nil : "tunnel stopped" }
}
