import Foundation

/// The VPS refused to let octunnel sign in: the key, the agent, or the methods it offers.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum SignInError: OCTunnelFailure, Equatable {
    /// Every failure here is in signing in.
    public static let roomLayer = "authentication"

    case keyNotAuthorized(
        user: String, host: String, port: Int, fingerprint: String, publicLine: String, restrictedLine: String)
    case passwordOnly(user: String, host: String, port: Int, methods: String)
    case agentUnavailable(reason: String)
    case agentHasNoUsableKeys(socket: String, skipped: [String])
    case agentKeysNotAuthorized(
        user: String, host: String, port: Int, tried: [String], skipped: [String], publicLine: String,
        restrictedLine: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .keyNotAuthorized(let user, let host, let port, let fingerprint, let publicLine, let restrictedLine):
            let login = "\(user)@\(Self.endpoint(host, port))"
            return FailureDetails(
                .permission,
                """
                \(login) refused key \(fingerprint). Add this line to \(Self.authorizedKeys(user)) \
                on the VPS (`octunnel pubkey`):
                  \(publicLine)
                or, to allow only the tunnel (`octunnel pubkey --restrict`):
                  \(restrictedLine)
                or let octunnel add its line through your own ssh login: `octunnel authorize \(login)` \
                (with your --remote-port; --listen on the home machine). A line added by hand that is there already \
                is ignored when sshd's StrictModes finds your home, ~/.ssh or authorized_keys writable by group \
                or others (`chmod go-w ~ ~/.ssh ~/.ssh/authorized_keys` on the VPS), or when the paste broke it \
                across lines or cut it short (it must be one whole line): `octunnel keys list \(login)` \
                shows the octunnel lines that are whole.
                """)
        case .passwordOnly(let user, let host, let port, let methods):
            return FailureDetails(
                .permission,
                """
                \(user)@\(Self.endpoint(host, port)) does not accept keys (it offers: \(methods)); \
                octunnel only uses keys. Enable PubkeyAuthentication in the VPS's sshd_config \
                and add the line from `octunnel pubkey`.
                """)
        case .agentUnavailable(let reason):
            return FailureDetails(.credentialsUnavailable, "no ssh-agent to sign in with: \(reason).")
        case .agentHasNoUsableKeys(let socket, let skipped):
            let note = skipped.isEmpty ? "" : " Skipped: \(skipped.joined(separator: ", "))."
            return FailureDetails(
                .credentialsUnavailable,
                """
                the ssh-agent at \(socket) holds no key octunnel can use (Ed25519 or ECDSA): \
                add one with `ssh-add`.\(note) \
                libssh2 1.10.0 signs RSA keys only with ssh-rsa (SHA-1), which OpenSSH 8.8 and later refuse.
                """)
        case .agentKeysNotAuthorized(
            let user, let host, let port, let tried, let skipped, let publicLine, let restrictedLine):
            let note =
                skipped.isEmpty
                ? ""
                : """

                Skipped (libssh2 1.10.0 cannot sign rsa-sha2, so OpenSSH 8.8 and later refuse them): \
                \(skipped.joined(separator: ", ")).
                """
            return FailureDetails(
                .permission,
                """
                \(user)@\(Self.endpoint(host, port)) refused every ssh-agent key tried: \
                \(tried.joined(separator: ", ")). Add this line for the first to \(Self.authorizedKeys(user)) \
                on the VPS:
                  \(publicLine)
                or, to allow only the tunnel:
                  \(restrictedLine)\(note)
                """)
        }
    }

    /// `user`'s authorized_keys file on the VPS, as a shell names it (`~/…` for root, `~user/…` otherwise).
    private static func authorizedKeys(_ user: String) -> String {
        "~\(user == "root" ? "" : user)/.ssh/authorized_keys"
    }
}
