import Foundation

/// OpenCode's password file (--password-file): missing, open to others, or unusable.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum PasswordFileError: OCTunnelFailure, Equatable {
    /// Every failure here is the password file's.
    public static let roomLayer = "password file"

    case noPasswordFile(path: String)
    /// `target`: the file a symlinked password file points at (chmod on the link would change it).
    case unsafePasswordFile(path: String, mode: UInt16, target: String? = nil)
    case badPasswordFile(path: String, reason: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .noPasswordFile(let path):
            FailureDetails(.noInput, "no password file at \(path): check --password-file.")
        case .unsafePasswordFile(let path, let mode, let target?):
            FailureDetails(
                .permission,
                """
                password file \(path) is a symbolic link to \(target), which others can read \
                (mode \(String(mode, radix: 8))); octunnel refuses it, as ssh refuses such keys. \
                Fix the target's mode if it is yours (chmod 600 \(target)), \
                or replace the link with a copy only you can read.
                """)
        case .unsafePasswordFile(let path, let mode, nil):
            FailureDetails(
                .permission,
                """
                password file \(path) is readable by others (mode \(String(mode, radix: 8))); \
                octunnel refuses it, as ssh refuses such keys. Fix: chmod 600 \(path)
                """)
        case .badPasswordFile(let path, let reason):
            FailureDetails(.dataError, "cannot use password file \(path): \(reason).")
        }
    }
}
