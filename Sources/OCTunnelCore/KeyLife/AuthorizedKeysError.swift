import Foundation

/// octunnel's lines in the VPS's authorized_keys, and the account they are for.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum AuthorizedKeysError: OCTunnelFailure, Equatable {
    /// Every failure here is about the authorized_keys lines.
    public static let roomLayer = "authorized keys"

    /// `authorize`, `keys`: the user's own ssh could not log in to the VPS (it exited 255), or is missing.
    case userSSHFailed(target: String, detail: String)
    /// `authorize`, `keys revoke`: the program on the VPS left authorized_keys unchanged (`reason` says why and the fix).
    case authorizedKeysRefused(target: String, file: String, reason: String)
    /// The VPS's answer had no line octunnel's programs print (not a POSIX shell there, or cut short).
    case vpsAnswerUnreadable(target: String, detail: String)
    /// A key's line is in place but the VPS refuses it what the line is for (its forward, its listen).
    case keyLineDoesNotWork(fingerprint: String, target: String, reason: String)
    /// `keygen --rotate --install`: the old key was retired but still signs in (another line lets it in).
    case oldKeyStillWorks(fingerprint: String, target: String)
    /// `authorize --account`: the login is not root, so no account nor sshd drop-in can be made (`advice`: what is open, and the lines).
    case accountNeedsRoot(target: String, account: String, advice: String)
    /// `authorize --account`: the account or its sshd drop-in could not be set up; sshd's configuration was left as it was.
    case accountNotSetUp(target: String, account: String, reason: String)
    /// `keygen --rotate --install`: a successor the rotation did not make holds the old key's line (a thief's add).
    case keyHeldByAnother(fingerprint: String, target: String, detail: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .userSSHFailed(let target, let detail):
            FailureDetails(
                .unavailable,
                """
                could not log in to the VPS with your ssh (`ssh \(target)`): \(detail). \
                Check that `ssh \(target)` logs you in, then run this again.
                """)
        case .authorizedKeysRefused(let target, let file, let reason):
            FailureDetails(.cannotCreate, "\(file) on \(target) was left unchanged: \(reason).")
        case .vpsAnswerUnreadable(let target, let detail):
            FailureDetails(
                .unavailable,
                """
                \(target) did not answer as octunnel's program does (\(detail)); \
                nothing is known to have changed: check with `octunnel keys list \(target)`.
                """)
        case .keyLineDoesNotWork(let fingerprint, let target, let reason):
            FailureDetails(
                .permission,
                """
                key \(fingerprint) signs in to \(target), but \(reason). Check the VPS's sshd_config \
                (`AllowTcpForwarding`, `DisableForwarding`, `PermitOpen`, `PermitListen`) \
                and `octunnel keys list \(target)`.
                """)
        case .oldKeyStillWorks(let fingerprint, let target):
            FailureDetails(
                .cannotCreate,
                """
                the old key \(fingerprint) was retired on \(target) but still signs in: another line lets it in. \
                Remove it (`octunnel keys list \(target)`, then `octunnel keys revoke \(fingerprint) \(target)`) \
                and run `octunnel keygen --rotate --install` again to finish.
                """)
        case .accountNeedsRoot(let target, let account, let advice):
            FailureDetails(
                .permission,
                """
                `ssh \(target)` is not a root login, so octunnel cannot create the account \(account) \
                nor add its sshd drop-in there: log in as root for `authorize --account` \
                (e.g. `octunnel authorize --account \(account) root@HOST`); meanwhile \(advice).
                """)
        case .accountNotSetUp(let target, let account, let reason):
            FailureDetails(
                .cannotCreate,
                "the account \(account) on \(target) was not set up: \(reason); sshd's configuration was left as it was."
            )
        case .keyHeldByAnother(let fingerprint, let target, let detail):
            FailureDetails(
                .permission,
                """
                someone else holds this key: revoke it from your own login \
                (`octunnel keys revoke \(fingerprint) \(target)`: its line and every successor), \
                then authorize a new key (`octunnel authorize \(target)`). On \(target), \(detail); nothing was rotated.
                """)
        }
    }
}
