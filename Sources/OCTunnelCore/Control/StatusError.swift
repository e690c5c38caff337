import Foundation

/// Asking a running octunnel for its status: nothing runs, or it does not answer.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum StatusError: OCTunnelFailure, Equatable {
    case notRunning(role: Role, profile: ProfileName, detail: String?)
    case statusNotAnswered(path: String, reason: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .notRunning: .notRunning
        case .statusNotAnswered: .unavailable
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        "status"
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .notRunning(let role, let profile, let detail):
            let what = role == .tunnel ? "no tunnel running" : "no home side running"
            let named = profile.isDefault ? "" : " for profile \(profile)"
            return what + named + (detail.map { ": \($0)" } ?? "")
        case .statusNotAnswered(let path, let reason):
            return "the octunnel process at \(path) did not answer (\(reason)); it may be stopped (kill -CONT) or busy."
        }
    }
}
