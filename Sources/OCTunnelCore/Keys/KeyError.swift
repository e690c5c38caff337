import Foundation

/// A key file octunnel reads or writes, and its passphrase: what went wrong and the next step.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum KeyError: OCTunnelFailure, Equatable {
    /// Every key failure is in the key layer, but for a half-done rotation's (in "rotation").
    public static let roomLayer = "key"

    case keyExists(path: String)
    case noKey(path: String)
    case unsafeKeyPermissions(path: String, mode: UInt16)
    /// A key reached through a symlink whose target others can read: chmod on the link would change the target.
    case unsafeLinkedKeyPermissions(path: String, target: String, mode: UInt16)
    case badKeyFile(path: String, reason: String)
    case wrongPassphrase(path: String)
    case passphraseUnavailable(path: String, reason: String)
    case passphrasesDiffer
    /// `keygen --rotate`: a rotation on the VPS is half done; its new pair waits in `.next`, so the
    /// key is not replaced (the VPS would be left with a successor nobody holds).
    case rotationPending(path: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .keyExists(let path):
            FailureDetails(
                .cannotCreate,
                """
                a key already exists at \(path); it was left untouched. \
                To replace it, keeping the old pair as \(path).prev, run `octunnel keygen --rotate`.
                """)
        case .noKey(let path):
            FailureDetails(
                .noInput,
                path.hasSuffix("/id_ed25519")
                    ? "no key yet (\(path)): run `octunnel keygen`."
                    : "no key at \(path): check --identity, or run `octunnel keygen`.")
        case .unsafeKeyPermissions(let path, let mode):
            FailureDetails(
                .permission,
                """
                private key \(path) is readable by others (mode \(String(mode, radix: 8))); \
                ssh refuses such keys and so does octunnel. Fix: chmod 600 \(path)
                """)
        case .unsafeLinkedKeyPermissions(let path, let target, let mode):
            FailureDetails(
                .permission,
                """
                private key \(path) is a symbolic link to \(target), which others can read \
                (mode \(String(mode, radix: 8))); ssh refuses such keys and so does octunnel. \
                Fix the target's mode if it is your key (chmod 600 \(target)), \
                or replace the link with a copy of the key only you can read.
                """)
        case .badKeyFile(let path, let reason):
            FailureDetails(.dataError, "cannot use key file \(path): \(reason).")
        case .wrongPassphrase(let path):
            FailureDetails(.wrongPassphrase, "wrong passphrase for key file \(path); nothing was changed.")
        case .passphraseUnavailable(let path, let reason):
            FailureDetails(.credentialsUnavailable, "the passphrase for key file \(path) cannot be asked: \(reason).")
        case .passphrasesDiffer:
            FailureDetails(.usage, "the two passphrases differ (or are empty); nothing was written.")
        case .rotationPending(let path):
            FailureDetails(
                .cannotCreate,
                """
                a key rotation on the VPS is half done (\(path)); its new key waits beside the current one. \
                Finish it first: `octunnel keygen --rotate --install`.
                """, layer: "rotation")
        }
    }
}
