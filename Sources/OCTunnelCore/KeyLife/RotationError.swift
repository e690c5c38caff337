import Foundation

/// A key rotation (`keygen --rotate --install`) that cannot start, go on or finish.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum RotationError: OCTunnelFailure, Equatable {
    /// `keygen --rotate --install`: the key's line on the VPS cannot rotate it (an older line, or the verb said no).
    case rotationNotOffered(target: String, reason: String)
    /// `keygen --rotate`: a rotation on the VPS is half done; its new pair waits in `.next`.
    case rotationPending(path: String)
    /// `keygen --rotate --install TARGET`: the pending rotation is towards another target.
    case rotationPendingElsewhere(path: String, target: String)
    /// The pending rotation's state no longer matches the key files.
    case rotationStateBroken(path: String, reason: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .rotationNotOffered: .permission
        case .rotationPending: .cannotCreate
        case .rotationPendingElsewhere: .usage
        case .rotationStateBroken: .dataError
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        "rotation"
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .rotationNotOffered(let target, let reason):
            return "the key cannot rotate itself on \(target): \(reason). "
                + "Install a line that can, once, through your own login: "
                + "`octunnel authorize \(target)` (with --listen on the home machine), then run this again."
        case .rotationPending(let path):
            return "a key rotation on the VPS is half done (\(path)); its new "
                + "key waits beside the current one. Finish it first: `octunnel keygen --rotate --install`."
        case .rotationPendingElsewhere(let path, let target):
            return
                "a key rotation towards \(target) is half done (\(path)); finish it first: `octunnel keygen --rotate --install \(target)`."
        case .rotationStateBroken(let path, let reason):
            return
                "the pending rotation in \(path) does not match the keys: \(reason). No key was deleted; move \(path) away to start over."
        }
    }
}
