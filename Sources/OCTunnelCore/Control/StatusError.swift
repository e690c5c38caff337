import Foundation

/// Asking a running octunnel for its status: nothing runs, or it does not answer.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum StatusError: OCTunnelFailure, Equatable {
    /// Every failure here is the status socket's.
    public static let roomLayer = "status"

    case notRunning(role: Role, profile: ProfileName, detail: String?)
    case statusNotAnswered(path: String, reason: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .notRunning(let role, let profile, let detail):
            let what = role == .tunnel ? "no tunnel running" : "no home side running"
            let named = profile.isDefault ? "" : " for profile \(profile)"
            return FailureDetails(.notRunning, what + named + (detail.map { ": \($0)" } ?? ""))
        case .statusNotAnswered(let path, let reason):
            return FailureDetails(
                .unavailable,
                "the octunnel process at \(path) did not answer (\(reason)); it may be stopped (kill -CONT) or busy.")
        }
    }
}
