import CLibSSH2
import Foundation

/// The authentication step of `SSHConnector.connect`: a key file, a key in memory, or the agent.
extension SSHConnector {
    /// What signs for us, found before any network traffic (a bad key file stops here).
    enum ClientIdentity {
        case file(path: String, key: SSHPublicKey)
        case memory(UnlockedKey)
        case agent

        var isAgent: Bool { if case .agent = self { return true } else { return false } }
    }

    func clientIdentity() throws(OCTunnelError) -> ClientIdentity {
        switch settings.authentication {
        case .agent:
            _ = try AgentCheck.socket()
            return .agent
        case .keyFile(let path):
            if let unlocked = settings.unlockedKey, unlocked.path == path { return .memory(unlocked) }
            let store = KeyStore(home: OctunnelDirectory(path: "/"))
            let loaded = try store.unlockPrivateKey(at: path) { (_: String) throws(PassphraseFailure) -> SecretBuffer in
                throw PassphraseFailure(reason: "it was not decrypted when octunnel started")
            }
            return .file(path: path, key: loaded.decoded.publicKey)
        }
    }

    /// Signs in; returns the public key the server accepted.
    func authenticate(_ session: SSHSession, identity: ClientIdentity) throws(OCTunnelError) -> SSHPublicKey {
        let target = settings.target
        if let methods = session.authenticationMethods(user: target.user) {
            guard methods.split(separator: ",").contains("publickey") else {
                throw .passwordOnly(user: target.user, host: target.host, port: target.port, methods: OutsideText.shown(methods, limit: 255))
            }
        }
        switch identity {
        case .agent:
            return try authenticateWithAgent(session)
        case .file(let path, let key):
            try signIn(as: key, path: path, session) { () throws(LibSSH2Error) in try session.authenticate(user: target.user, privateKeyPath: path) }
            return key
        case .memory(let unlocked):
            try signIn(as: unlocked.publicKey, path: unlocked.path, session) { () throws(LibSSH2Error) in
                try session.authenticate(user: target.user, privateKey: unlocked.privateText)
            }
            return unlocked.publicKey
        }
    }

    /// Runs one key's sign-in (unless the server needed none) and names what went wrong.
    func signIn(as key: SSHPublicKey, path: String, _ session: SSHSession,
                        _ attempt: () throws(LibSSH2Error) -> Void) throws(OCTunnelError) {
        let target = settings.target
        guard libssh2_userauth_authenticated(session.raw) == 0 else { return }
        do {
            try attempt()
        } catch {
            switch error.code {
            case LIBSSH2_ERROR_AUTHENTICATION_FAILED, LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED:
                throw .keyNotAuthorized(user: target.user, host: target.host, port: target.port, fingerprint: key.fingerprint,
                                        publicLine: key.line,
                                        restrictedLine: restrictedAuthorizedKeysLine(key, remoteHost: settings.keyLineVPSEnd.host, remotePort: settings.keyLineVPSEnd.port))
            case LIBSSH2_ERROR_FILE:
                throw .badKeyFile(path: path, reason: "libssh2 cannot load it: \(error.message)")
            default:
                throw .sshFailure(host: target.host, port: target.port, detail: "authentication failed: \(error)")
            }
        }
    }

    /// Tries the agent's Ed25519 and ECDSA keys in its order; RSA and DSA keys are skipped
    /// (libssh2 1.10.0 signs RSA only with ssh-rsa, which OpenSSH 8.8 and later refuse).
    func authenticateWithAgent(_ session: SSHSession) throws(OCTunnelError) -> SSHPublicKey {
        let target = settings.target
        let socket = try AgentCheck.socket()
        let agent: SSHAgent
        let identities: [SSHAgent.Identity]
        do {
            agent = try SSHAgent(session: session)
            try agent.connect()
            identities = try agent.identities()
        } catch {
            throw AgentCheck.unreachable(socket, error)
        }
        let usable = identities.filter { AgentCheck.isUsable($0.key) }
        let skipped = identities.filter { !AgentCheck.isUsable($0.key) }.map { AgentCheck.describe($0.key) }
        guard let first = usable.first else { throw .agentHasNoUsableKeys(socket: socket, skipped: skipped) }
        var tried: [String] = []
        for identity in usable {
            tried.append(identity.key.fingerprint)
            do {
                try agent.authenticate(user: target.user, with: identity)
                return identity.key
            } catch {
                switch error.code {
                case LIBSSH2_ERROR_AUTHENTICATION_FAILED, LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED:
                    continue
                case LIBSSH2_ERROR_AGENT_PROTOCOL:
                    throw .agentUnavailable(reason: "the ssh-agent at \(socket) did not sign with \(identity.key.fingerprint) (\(error.message)); is it still running, or locked?")
                default:
                    throw .sshFailure(host: target.host, port: target.port, detail: "authentication with ssh-agent key \(identity.key.fingerprint) failed: \(error)")
                }
            }
        }
        throw .agentKeysNotAuthorized(user: target.user, host: target.host, port: target.port, tried: tried, skipped: skipped,
                                      publicLine: first.key.line,
                                      restrictedLine: restrictedAuthorizedKeysLine(first.key, remoteHost: settings.keyLineVPSEnd.host, remotePort: settings.keyLineVPSEnd.port))
    }
}
