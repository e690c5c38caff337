import Foundation

/// A key file octunnel reads or writes, and its passphrase: what went wrong and the next step.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum KeyError: OCTunnelFailure, Equatable {
    case keyExists(path: String)
    case noKey(path: String)
    case unsafeKeyPermissions(path: String, mode: UInt16)
    /// A key reached through a symlink whose target others can read: chmod on the link would change the target.
    case unsafeLinkedKeyPermissions(path: String, target: String, mode: UInt16)
    case badKeyFile(path: String, reason: String)
    case wrongPassphrase(path: String)
    case passphraseUnavailable(path: String, reason: String)
    case passphrasesDiffer

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .keyExists: .cannotCreate
        case .noKey: .noInput
        case .unsafeKeyPermissions, .unsafeLinkedKeyPermissions: .permission
        case .badKeyFile: .dataError
        case .wrongPassphrase: .wrongPassphrase
        case .passphraseUnavailable: .credentialsUnavailable
        case .passphrasesDiffer: .usage
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        "key"
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .keyExists(let path):
            return "a key already exists at \(path); it was left untouched. "
                + "To replace it, keeping the old pair as \(path).prev, run `octunnel keygen --rotate`."
        case .noKey(let path):
            return path.hasSuffix("/id_ed25519")
                ? "no key yet (\(path)): run `octunnel keygen`."
                : "no key at \(path): check --identity, or run `octunnel keygen`."
        case .unsafeKeyPermissions(let path, let mode):
            return "private key \(path) is readable by others (mode \(String(mode, radix: 8))); "
                + "ssh refuses such keys and so does octunnel. Fix: chmod 600 \(path)"
        case .unsafeLinkedKeyPermissions(let path, let target, let mode):
            return "private key \(path) is a symbolic link to \(target), which "
                + "others can read (mode \(String(mode, radix: 8))); ssh refuses "
                + "such keys and so does octunnel. Fix the target's mode if "
                + "it is your key (chmod 600 \(target)), or replace the link with a copy of the key only you can read."
        case .badKeyFile(let path, let reason):
            return "cannot use key file \(path): \(reason)."
        case .wrongPassphrase(let path):
            return "wrong passphrase for key file \(path); nothing was changed."
        case .passphraseUnavailable(let path, let reason):
            return "the passphrase for key file \(path) cannot be asked: \(reason)."
        case .passphrasesDiffer:
            return "the two passphrases differ (or are empty); nothing was written."
        }
    }
}
