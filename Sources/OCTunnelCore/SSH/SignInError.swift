import Foundation

/// The VPS refused to let octunnel sign in: the key, the agent, or the methods it offers.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum SignInError: OCTunnelFailure, Equatable {
    case keyNotAuthorized(
        user: String, host: String, port: Int, fingerprint: String, publicLine: String, restrictedLine: String)
    case passwordOnly(user: String, host: String, port: Int, methods: String)
    case agentUnavailable(reason: String)
    case agentHasNoUsableKeys(socket: String, skipped: [String])
    case agentKeysNotAuthorized(
        user: String, host: String, port: Int, tried: [String], skipped: [String], publicLine: String,
        restrictedLine: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .keyNotAuthorized, .passwordOnly, .agentKeysNotAuthorized: .permission
        case .agentUnavailable, .agentHasNoUsableKeys: .credentialsUnavailable
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        "authentication"
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .keyNotAuthorized(let user, let host, let port, let fingerprint, let publicLine, let restrictedLine):
            return [
                "\(user)@\(Self.endpoint(host, port)) refused key \(fingerprint). ",
                "Add this line to ~\(user == "root" ? "" : user)/.ssh/authorized_keys ",
                "on the VPS (`octunnel pubkey`):\n  \(publicLine)\nor, to allow ",
                "only the tunnel (`octunnel pubkey --restrict`):\n  \(restrictedLine)\nor ",
                "let octunnel add its line through your own ssh login: `octunnel ",
                "authorize \(user)@\(Self.endpoint(host, port))` (with your --remote-port; ",
                "--listen on the home machine). A line added by hand that is there ",
                "already is ignored when sshd's StrictModes finds your home, ~/.ssh ",
                "or authorized_keys writable by group or others (`chmod go-w ~ ",
                "~/.ssh ~/.ssh/authorized_keys` on the VPS), or when the paste ",
                "broke it across lines or cut it short (it " + "must be one whole line): `octunnel keys "
                    + "list \(user)@\(Self.endpoint(host, port))` shows the octunnel lines that are whole.",
            ].joined()
        case .passwordOnly(let user, let host, let port, let methods):
            return "\(user)@\(Self.endpoint(host, port)) does not accept "
                + "keys (it offers: \(methods)); octunnel only uses keys. "
                + "Enable PubkeyAuthentication in the VPS's sshd_config and add the line from `octunnel pubkey`."
        case .agentUnavailable(let reason):
            return "no ssh-agent to sign in with: \(reason)."
        case .agentHasNoUsableKeys(let socket, let skipped):
            let note = skipped.isEmpty ? "" : " Skipped: \(skipped.joined(separator: ", "))."
            return "the ssh-agent at \(socket) holds no key octunnel can "
                + "use (Ed25519 or ECDSA): add one with `ssh-add`.\(note) "
                + "libssh2 1.10.0 signs RSA keys only with ssh-rsa (SHA-1), which OpenSSH 8.8 and later refuse."
        case .agentKeysNotAuthorized(
            let user, let host, let port, let tried, let skipped, let publicLine, let restrictedLine):
            let note =
                skipped.isEmpty
                ? ""
                : "\nSkipped (libssh2 1.10.0 cannot sign rsa-sha2, "
                    + "so OpenSSH 8.8 and later refuse them): \(skipped.joined(separator: ", "))."
            return "\(user)@\(Self.endpoint(host, port)) refused every ssh-agent "
                + "key tried: \(tried.joined(separator: ", ")). Add this "
                + "line for the first to ~\(user == "root" ? "" : user)/.ssh/authorized_keys "
                + "on the VPS:\n  \(publicLine)\nor, to allow only the tunnel:\n  \(restrictedLine)\(note)"
        }
    }
}
