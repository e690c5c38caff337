import Foundation

/// Answering OpenCode's permission requests and questions.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum PermissionError: OCTunnelFailure, Equatable {
    /// `permission allow|always|reject ID`: OpenCode no longer waits on that request.
    case permissionNotPending(id: String)
    /// `permission answer|dismiss ID`, or a question's notification: OpenCode no longer waits on that question.
    case questionNotPending(id: String)
    /// `permission`: OpenCode could not be reached through the tunnel, or answered something else.
    case permissionFailed(detail: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .permissionNotPending, .questionNotPending: .notPending
        case .permissionFailed: .unavailable
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        "permission"
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .permissionNotPending(let id):
            return "permission \(id) is no longer pending: it " + "was already answered elsewhere, or OpenCode "
                + "restarted. Nothing was sent again; `octunnel permission list` shows what still waits."
        case .questionNotPending(let id):
            return "question \(id) is no longer pending: it " + "was already answered elsewhere, or OpenCode "
                + "restarted. Nothing was sent; `octunnel permission list` shows what still waits."
        case .permissionFailed(let detail):
            return "\(detail)."
        }
    }
}
