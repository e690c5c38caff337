import CLibSSH2
import Foundation

/// Opens a session step by step (resolve, TCP, handshake, host key, authentication), each
/// failure naming its layer. Blocking; the event loop runs it on a helper thread.
public struct SSHConnector: Sendable {
    public let settings: ConnectionSettings

    public init(settings: ConnectionSettings) { self.settings = settings }

    public func connect(onStage: (StageReport) -> Void = { _ in }) throws -> EstablishedSession {
        let target = settings.target
        let identity = try clientIdentity()

        var clock = Date()
        func lap() -> Int {
            let now = Date()
            defer { clock = now }
            return Int((now.timeIntervalSince(clock) * 1000).rounded())
        }
        let addresses = try SocketFailure.thrownAsFailure { () throws(SocketFailure) in
            try Sockets.resolve(host: target.host, port: target.port)
        }
        onStage(
            StageReport(stage: .resolve, milliseconds: lap(), detail: "\(target.host): \(addresses.count) address(es)"))
        let socket = try SocketFailure.thrownAsFailure { () throws(SocketFailure) in
            try Sockets.connect(
                host: target.host, port: target.port, addresses: addresses, timeout: settings.connectTimeout)
        }
        onStage(StageReport(stage: .tcp, milliseconds: lap(), detail: "connected to \(target.hostPort)"))

        var banner = try peekBanner(socket)
        let session: SSHSession
        do {
            session = try SSHSession(socket: socket)
        } catch {
            socket.close()
            throw ConnectError.sshFailure(host: target.host, port: target.port, detail: error.description)
        }
        session.setBlocking(true)
        session.setTimeout(milliseconds: Int(settings.connectTimeout * 1000))
        do {
            try session.preferHostKeys(knownHostKeyTypes())
            try session.handshake()
        } catch {
            let seen = banner ?? session.serverBanner
            session.close()
            throw classifyHandshakeFailure(error, banner: seen)
        }
        banner = banner ?? session.serverBanner
        let keyExchange = session.negotiated(LIBSSH2_METHOD_KEX)
        let cipher = session.negotiated(LIBSSH2_METHOD_CRYPT_CS)
        let mac = session.negotiated(LIBSSH2_METHOD_MAC_CS)
        onStage(
            StageReport(
                stage: .handshake, milliseconds: lap(),
                detail: "\(banner ?? "SSH server"), \(keyExchange), \(cipher), \(mac)"))

        guard let hostKey = session.hostKey() else {
            session.close()
            throw ConnectError.sshFailure(
                host: target.host, port: target.port, detail: "the server presented no host key")
        }
        let trust: HostKeyTrust
        var notes: [String] = []
        do {
            trust = try verifyHostKey(hostKey, notes: &notes)
        } catch {
            session.close()
            throw error
        }
        let noted = notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))"
        onStage(
            StageReport(
                stage: .hostKey, milliseconds: lap(),
                detail: "\(hostKey.type) \(hostKey.fingerprint) \(trust.text)\(noted)"))

        let clientKey: SSHPublicKey
        do {
            clientKey = try authenticate(session, identity: identity)
        } catch {
            session.close()
            throw error
        }
        let idle: SSHChannel
        do {
            idle = try session.openSessionChannel()
        } catch {
            session.close()
            throw ConnectError.sshFailure(
                host: target.host, port: target.port, detail: "cannot open the keepalive channel: \(error)")
        }
        let signer =
            (identity.isAgent ? "ssh-agent key " : "") + clientKey.fingerprint
            + (identity.path.map { " (\($0))" } ?? "")
        onStage(StageReport(stage: .authentication, milliseconds: lap(), detail: "\(target.user) with \(signer)"))
        let info = SessionInfo(
            hostKey: hostKey, newlyTrusted: trust == .firstUse, hostKeyTrust: trust, keyExchange: keyExchange,
            cipher: cipher, mac: mac,
            serverBanner: banner ?? "", user: target.user, clientKeyFingerprint: clientKey.fingerprint)
        return EstablishedSession(session: session, idleChannel: idle, info: info)
    }

    /// Looks at the server's first bytes without consuming them: an SSH server greets first.
    /// It waits at most `bannerPeek` seconds: a multiplexer in front of sshd (sslh on port 443)
    /// waits for the client to speak first, 2 s by default, and every connection paid that
    /// whole wait when this one was 2 s. A greeting slower than that is read by libssh2's
    /// handshake instead (`SSHSession.serverBanner`).
    private func peekBanner(_ socket: OwnedDescriptor) throws -> String? {
        guard
            (try? socket.waitReadable(milliseconds: Int32(min(Self.bannerPeek, settings.connectTimeout) * 1000)))
                == true
        else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = socket.receive(&buffer, buffer.count, options: .peek).count
        guard count > 0 else {
            socket.close()
            throw ConnectError.closedBeforeGreeting(host: settings.target.host, port: settings.target.port)
        }
        // Split on the byte: as a String, "\r\n" is one Character and never equals "\n".
        let lines = buffer[..<count].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        if let line = lines.first(where: { $0.hasPrefix("SSH-") }) {
            // Read before the host key is checked: anyone on the path may have written it.
            return OutsideText.shown(line.trimmingCharacters(in: .whitespacesAndNewlines), limit: 255)
        }
        let first = (lines.first ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if lines.count > 1 && first == Self.openSSHDrop {
            socket.close()
            throw ConnectError.closedBeforeGreeting(host: settings.target.host, port: settings.target.port)
        }
        if lines.count > 1 || count == buffer.count {
            socket.close()
            let shown = String(
                first.unicodeScalars.map { $0.value >= 0x20 && $0.value < 0x7f ? Character($0) : "." }.prefix(60))
            throw ConnectError.notSSH(
                host: settings.target.host, port: settings.target.port,
                detail: "it answered \"\(shown)\" instead of an SSH greeting")
        }
        return nil
    }

    /// The line OpenSSH's sshd (9.8+) writes to a connection it drops before its greeting, then
    /// closes it: a penalized address (PerSourcePenalties) or past MaxStartups. Seen from Debian
    /// 13's sshd (OpenSSH 10.0p2); read as "not an SSH server" until OpenSSH10Tests provoked it.
    static let openSSHDrop = "Not allowed at this time"

    /// How long the connector waits for the server to greet before libssh2's handshake speaks.
    static let bannerPeek = 0.3

    private func classifyHandshakeFailure(_ error: LibSSH2Error, banner: String?) -> ConnectError {
        let target = settings.target
        switch error.code {
        case LIBSSH2_ERROR_KEX_FAILURE, LIBSSH2_ERROR_METHOD_NOT_SUPPORTED, LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE:
            var detail =
                "libssh2: \(error.message). Compare the server's HostKeyAlgorithms, KexAlgorithms, Ciphers and MACs "
                + "with what octunnel speaks on libssh2 \(LibSSH2.runningVersion) (docs/troubleshooting.md)."
            if let offers = ServerAlgorithmProbe.offers(
                host: target.host, port: target.port, timeout: settings.connectTimeout)
            {
                let gaps = AlgorithmGap.gaps(
                    offered: offers.lists,
                    spoken: Dictionary(
                        uniqueKeysWithValues: AlgorithmGap.List.allCases.map {
                            ($0, SSHAlgorithms.spoken($0))
                        }))
                if !gaps.isEmpty { detail = AlgorithmGap.explain(gaps, libssh2: LibSSH2.runningVersion) }
            }
            // The lists are the server's words, sent before its host key is checked.
            return .noCommonAlgorithms(
                host: target.host, port: target.port, detail: OutsideText.shown(detail, limit: 2048))
        case LIBSSH2_ERROR_TIMEOUT where banner == nil,
            LIBSSH2_ERROR_SOCKET_TIMEOUT where banner == nil:
            return .notSSH(
                host: target.host, port: target.port,
                detail: "it sent no SSH greeting within \(Int(settings.connectTimeout)) s")
        default:
            if banner == nil {
                return .notSSH(
                    host: target.host, port: target.port,
                    detail: "it did not answer the SSH greeting (\(error.message))")
            }
            return .sshFailure(host: target.host, port: target.port, detail: "handshake failed: \(error)")
        }
    }
}

/// The host key step of `SSHConnector.connect`.
extension SSHConnector {
    /// The host key types octunnel's store and OpenSSH's files hold for the target, to ask for first.
    func knownHostKeyTypes() -> [String] {
        let target = settings.target
        var types = KnownHostsStore(path: settings.knownHostsPath).knownKeyTypes(host: target.host, port: target.port)
        for type in settings.openSSHKnownHosts?.knownKeyTypes(host: target.host, port: target.port) ?? []
        where !types.contains(type) {
            types.append(type)
        }
        return types
    }

    /// Checks the host key against the store, then (for a host it does not know) OpenSSH's
    /// known_hosts files; says why the key is accepted, or throws before authentication.
    func verifyHostKey(_ key: SSHPublicKey, notes: inout [String]) throws -> HostKeyTrust {
        let target = settings.target
        let store = KnownHostsStore(path: settings.knownHostsPath)
        if let expected = settings.expectFingerprint, expected != key.fingerprint {
            throw TrustError.hostKeyNotExpected(
                host: target.host, port: target.port, expected: expected, presented: key.fingerprint)
        }
        switch try store.verdict(host: target.host, port: target.port, key: key) {
        case .trusted:
            return .known
        case .changed(let known):
            throw TrustError.hostKeyChanged(
                host: target.host, port: target.port, known: known, presented: key.fingerprint, file: store.path)
        case .revoked:
            throw TrustError.hostKeyRevoked(
                host: target.host, port: target.port, presented: key.fingerprint, file: store.path)
        case .unknown:
            break
        }
        switch settings.openSSHKnownHosts?.verdict(host: target.host, port: target.port, key: key, notes: &notes)
            ?? .notFound
        {
        case .verified(let place):
            try store.record(host: target.host, port: target.port, key: key)
            return .openSSH(place)
        case .differs(let place, let known):
            let name =
                settings.openSSHKnownHosts?.lookupName(host: target.host, port: target.port)
                ?? target.hostPort.knownHostsName
            throw TrustError.hostKeyDiffersFromOpenSSH(
                host: target.host, port: target.port, presented: key.fingerprint, known: known,
                file: place.file, line: place.line, name: name)
        case .revoked(let place):
            throw TrustError.hostKeyRevoked(
                host: target.host, port: target.port, presented: key.fingerprint,
                file: "\(place.file) line \(place.line)")
        case .otherTypes(let known):
            guard settings.strictHostKeyChecking.acceptsNewKeyType || settings.expectFingerprint != nil else {
                try refuseUnknownHost(key)
                throw TrustError.hostKeyTypeUnknownToOpenSSH(
                    host: target.host, port: target.port, presentedType: key.type,
                    presented: key.fingerprint, known: known.map(\.description))
            }
            try refuseUnknownHost(key)
            try store.record(host: target.host, port: target.port, key: key)
            return .firstUse
        case .notFound:
            try refuseUnknownHost(key)
            try store.record(host: target.host, port: target.port, key: key)
            return .firstUse
        }
    }

    /// Throws unless a host no file knows may be trusted now: `--expect-fingerprint` (already
    /// compared) always may; `--no-trust-new` and StrictHostKeyChecking `yes` refuse it.
    private func refuseUnknownHost(_ key: SSHPublicKey) throws {
        let target = settings.target
        guard settings.expectFingerprint == nil else { return }
        guard settings.trustNew else {
            throw TrustError.unknownHostRefused(host: target.host, port: target.port, presented: key.fingerprint)
        }
        guard settings.strictHostKeyChecking.acceptsUnknownHost else {
            throw TrustError.unknownHostRefusedByStrictChecking(
                host: target.host, port: target.port, presented: key.fingerprint)
        }
    }
}

/// The authentication step of `SSHConnector.connect`: a key file, a key in memory, or the agent.
extension SSHConnector {
    /// What signs for us, found before any network traffic (a bad key file stops here).
    enum ClientIdentity {
        case file(path: String, key: SSHPublicKey)
        case memory(UnlockedKey)
        case agent

        var isAgent: Bool { if case .agent = self { return true } else { return false } }

        /// The key file signed in with (named in the authentication stage); nil for the agent.
        var path: String? {
            switch self {
            case .file(let path, _): return path
            case .memory(let unlocked): return unlocked.path
            case .agent: return nil
            }
        }
    }

    func clientIdentity() throws -> ClientIdentity {
        switch settings.authentication {
        case .agent:
            _ = try AgentCheck.socket()
            return .agent
        case .keyFile(let path):
            if let unlocked = settings.unlockedKey, unlocked.path == path { return .memory(unlocked) }
            let store = KeyStore(directory: OctunnelDirectory(path: "/"))
            let loaded = try store.unlockPrivateKey(at: path) { (_: String) throws(PassphraseFailure) -> SecretBuffer in
                throw PassphraseFailure(reason: "it was not decrypted when octunnel started")
            }
            return .file(path: path, key: loaded.decoded.publicKey)
        }
    }

    /// Signs in; returns the public key the server accepted.
    func authenticate(_ session: SSHSession, identity: ClientIdentity) throws -> SSHPublicKey {
        let target = settings.target
        if let methods = session.authenticationMethods(user: target.user) {
            guard methods.split(separator: ",").contains("publickey") else {
                throw SignInError.passwordOnly(
                    user: target.user, host: target.host, port: target.port,
                    methods: OutsideText.shown(methods, limit: 255))
            }
        }
        switch identity {
        case .agent:
            return try authenticateWithAgent(session)
        case .file(let path, let key):
            try signIn(as: key, path: path, session) { () throws(LibSSH2Error) in
                try session.authenticate(user: target.user, privateKeyPath: path)
            }
            return key
        case .memory(let unlocked):
            try signIn(as: unlocked.publicKey, path: unlocked.path, session) { () throws(LibSSH2Error) in
                try session.authenticate(user: target.user, privateKey: unlocked.privateText)
            }
            return unlocked.publicKey
        }
    }

    /// Runs one key's sign-in (unless the server needed none) and names what went wrong.
    func signIn(
        as key: SSHPublicKey, path: String, _ session: SSHSession,
        _ attempt: () throws(LibSSH2Error) -> Void
    ) throws {
        let target = settings.target
        guard libssh2_userauth_authenticated(session.raw) == 0 else { return }
        do {
            try attempt()
        } catch {
            switch error.code {
            case LIBSSH2_ERROR_AUTHENTICATION_FAILED, LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED:
                throw SignInError.keyNotAuthorized(
                    user: target.user, host: target.host, port: target.port, fingerprint: key.fingerprint,
                    publicLine: key.line,
                    restrictedLine: restrictedAuthorizedKeysLine(
                        key, remoteHost: settings.keyLineVPSEnd.host, remotePort: settings.keyLineVPSEnd.port))
            case LIBSSH2_ERROR_FILE:
                throw KeyError.badKeyFile(path: path, reason: "libssh2 cannot load it: \(error.message)")
            default:
                throw ConnectError.sshFailure(
                    host: target.host, port: target.port, detail: "authentication failed: \(error)")
            }
        }
    }

    /// Tries the agent's Ed25519 and ECDSA keys in its order; RSA and DSA keys are skipped
    /// (libssh2 1.10.0 signs RSA only with ssh-rsa, which OpenSSH 8.8 and later refuse).
    func authenticateWithAgent(_ session: SSHSession) throws -> SSHPublicKey {
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
        guard let first = usable.first else { throw SignInError.agentHasNoUsableKeys(socket: socket, skipped: skipped) }
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
                    throw SignInError.agentUnavailable(
                        reason: "the ssh-agent at \(socket) did not sign with \(identity.key.fingerprint)"
                            + " (\(error.message)); is it still running, or locked?")
                default:
                    throw ConnectError.sshFailure(
                        host: target.host, port: target.port,
                        detail: "authentication with ssh-agent key \(identity.key.fingerprint) failed: \(error)")
                }
            }
        }
        throw SignInError.agentKeysNotAuthorized(
            user: target.user, host: target.host, port: target.port, tried: tried, skipped: skipped,
            publicLine: first.key.line,
            restrictedLine: restrictedAuthorizedKeysLine(
                first.key, remoteHost: settings.keyLineVPSEnd.host, remotePort: settings.keyLineVPSEnd.port))
    }
}
