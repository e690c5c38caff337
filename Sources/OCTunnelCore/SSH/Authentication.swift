import Foundation

/// How octunnel signs in to the VPS: with a private key file, or with the keys of the
/// ssh-agent at `$SSH_AUTH_SOCK` (no key file read or written).
public enum Authentication: Sendable, Equatable {
    case keyFile(String)
    case agent

    /// The key file, when there is one.
    public var keyFilePath: String? {
        if case .keyFile(let path) = self { return path }
        return nil
    }
}

/// A passphrase-protected key, decrypted once at start and held in memory (as unencrypted
/// OpenSSH text, NUL-terminated for libssh2) so that reconnects need no passphrase. The
/// passphrase itself is wiped as soon as the key is decrypted; this buffer when the last
/// session settings holding it go.
public final class UnlockedKey: Sendable {
    public let path: String
    public let publicKey: SSHPublicKey
    let privateText: SecretBuffer

    init(path: String, decoded: OpenSSHPrivateKey.Decoded, checkValue: UInt32) {
        self.path = path
        publicKey = decoded.publicKey
        let text = Array(OpenSSHPrivateKey.encode(decoded.pair, comment: decoded.comment, checkValue: checkValue).utf8)
        let buffer = SecretBuffer(count: text.count + 1)
        for (index, byte) in text.enumerated() { buffer[index] = byte }
        privateText = buffer
    }
}

/// The ssh-agent as octunnel sees it, checked before connecting.
public enum AgentCheck {
    /// The agent's socket path, or why there is none.
    public static func socket(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        guard let socket = environment["SSH_AUTH_SOCK"], !socket.isEmpty else {
            throw SignInError.agentUnavailable(
                reason: "SSH_AUTH_SOCK is not set (start one with `eval \"$(ssh-agent)\"`, then `ssh-add` your key)")
        }
        return socket
    }

    /// The agent's keys, in its order; an unreachable agent is exit 81.
    public static func keys() throws -> [SSHPublicKey] {
        let socket = try socket()
        do {
            return try SSHAgent.listKeys()
        } catch {
            throw AgentCheck.unreachable(socket, error)
        }
    }

    /// Whether libssh2 1.10.0 can sign with an agent key so that a current OpenSSH accepts it:
    /// not RSA (ssh-rsa/SHA-1 only, refused by OpenSSH 8.8 and later) and not DSA.
    public static func isUsable(_ key: SSHPublicKey) -> Bool {
        !["ssh-rsa", "ssh-dss"].contains(key.type)
    }

    /// The agent at `socket` did not answer.
    static func unreachable(_ socket: String, _ error: LibSSH2Error) -> SignInError {
        .agentUnavailable(
            reason:
                "nothing answers at SSH_AUTH_SOCK=\(socket) (\(error.message.isEmpty ? "libssh2 error \(error.code)" : error.message)"
                + "): start the agent again and `ssh-add` the key, " + "or fix SSH_AUTH_SOCK")
    }

    static func describe(_ key: SSHPublicKey) -> String {
        "\(key.type) \(key.fingerprint)\(key.comment.isEmpty ? "" : " (\(key.comment))")"
    }
}

extension ConnectionSettings {
    /// Gets ready to sign in before the first connection: checks that the agent answers and
    /// holds a usable key, or opens the key file, asking for its passphrase (through
    /// `prompt`) only if it is encrypted; a decrypted key is kept for reconnects.
    public func preparedForSignIn(prompt: PassphrasePrompt) throws -> ConnectionSettings {
        var prepared = self
        switch authentication {
        case .agent:
            let keys = try AgentCheck.keys()
            if !keys.contains(where: AgentCheck.isUsable) {
                throw SignInError.agentHasNoUsableKeys(
                    socket: (try? AgentCheck.socket()) ?? "?", skipped: keys.map(AgentCheck.describe))
            }
        case .keyFile(let path):
            let store = KeyStore(directory: OctunnelDirectory(path: "/"))
            let loaded = try store.unlockPrivateKey(at: path) {
                (text: String) throws(PassphraseFailure) -> SecretBuffer in
                try prompt.ask(text)
            }
            if loaded.wasEncrypted {
                prepared.unlockedKey = UnlockedKey(
                    path: path, decoded: loaded.decoded, checkValue: UInt32.random(in: 0...UInt32.max))
            }
        }
        return prepared
    }
}
