import Foundation

/// A key rotation (`keygen --rotate --install`) that cannot start, go on or finish.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum RotationError: OCTunnelFailure, Equatable {
    /// Every failure here is the rotation's.
    public static let roomLayer = "rotation"

    /// `keygen --rotate --install`: the key's line on the VPS cannot rotate it (an older line, or the verb said no).
    case rotationNotOffered(target: String, reason: String)
    /// `keygen --rotate --install TARGET`: the pending rotation is towards another target.
    case rotationPendingElsewhere(path: String, target: String)
    /// The pending rotation's state no longer matches the key files.
    case rotationStateBroken(path: String, reason: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .rotationNotOffered(let target, let reason):
            FailureDetails(
                .permission,
                """
                the key cannot rotate itself on \(target): \(reason). Install a line that can, once, \
                through your own login: `octunnel authorize \(target)` (with --listen on the home machine), \
                then run this again.
                """)
        case .rotationPendingElsewhere(let path, let target):
            FailureDetails(
                .usage,
                """
                a key rotation towards \(target) is half done (\(path)); \
                finish it first: `octunnel keygen --rotate --install \(target)`.
                """)
        case .rotationStateBroken(let path, let reason):
            FailureDetails(
                .dataError,
                """
                the pending rotation in \(path) does not match the keys: \(reason). \
                No key was deleted; move \(path) away to start over.
                """)
        }
    }
}
