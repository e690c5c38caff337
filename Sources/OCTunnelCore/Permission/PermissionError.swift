import Foundation

/// Answering OpenCode's permission requests and questions.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum PermissionError: OCTunnelFailure, Equatable {
    /// Every failure here is in answering OpenCode's requests.
    public static let roomLayer = "permission"

    /// `permission allow|always|reject ID`: OpenCode no longer waits on that request.
    case permissionNotPending(id: String)
    /// `permission answer|dismiss ID`, or a question's notification: OpenCode no longer waits on that question.
    case questionNotPending(id: String)
    /// `permission`: OpenCode could not be reached through the tunnel, or answered something else.
    case permissionFailed(detail: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .permissionNotPending(let id):
            FailureDetails(.notPending, Self.notPending("permission \(id)", sent: "Nothing was sent again"))
        case .questionNotPending(let id):
            FailureDetails(.notPending, Self.notPending("question \(id)", sent: "Nothing was sent"))
        case .permissionFailed(let detail):
            FailureDetails(.unavailable, "\(detail).")
        }
    }

    /// A request or question OpenCode no longer waits on, and what octunnel did not send.
    private static func notPending(_ what: String, sent: String) -> String {
        """
        \(what) is no longer pending: it was already answered elsewhere, or OpenCode restarted. \
        \(sent); `octunnel permission list` shows what still waits.
        """
    }
}
