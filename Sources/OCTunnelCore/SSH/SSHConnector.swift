import CLibSSH2
import Foundation

/// What is needed to open an authenticated session to the VPS.
public struct ConnectionSettings: Sendable {
    public var target: SSHTarget
    /// A key file or the ssh-agent.
    public var authentication: Authentication
    /// A passphrase-protected key file, decrypted at start (`preparedForSignIn`).
    public var unlockedKey: UnlockedKey?
    public var knownHostsPath: String
    public var connectTimeout: Double
    public var expectFingerprint: String?
    public var trustNew: Bool
    public var remoteHost: String
    public var remotePort: Int
    /// OpenSSH's known_hosts files to consult for a host octunnel's store does not know;
    /// nil skips them (`--no-openssh-known-hosts`).
    public var openSSHKnownHosts: OpenSSHKnownHosts?

    public init(target: SSHTarget, authentication: Authentication, knownHostsPath: String,
                connectTimeout: Double = Double(Defaults.connectTimeoutSeconds), expectFingerprint: String? = nil, trustNew: Bool = true,
                remoteHost: String = Defaults.remoteHost, remotePort: Int = Defaults.remotePort) {
        self.target = target
        self.authentication = authentication
        self.knownHostsPath = knownHostsPath
        self.connectTimeout = connectTimeout
        self.expectFingerprint = expectFingerprint
        self.trustNew = trustNew
        self.remoteHost = remoteHost
        self.remotePort = remotePort
    }
}

/// The stages of getting a session, in order; `tunnel check` reports each with its time.
public enum ConnectStage: String, Sendable, CaseIterable {
    case resolve, tcp, handshake, hostKey = "host key", authentication
}

/// A finished stage and what it found.
public struct StageReport: Sendable {
    public let stage: ConnectStage
    public let milliseconds: Int
    public let detail: String
}

/// Why the host key was accepted.
public enum HostKeyTrust: Sendable, Equatable {
    /// octunnel's own store already held it.
    case known
    /// Nothing knew the host: trusted on first use (and recorded).
    case firstUse
    /// The user's OpenSSH known_hosts held it (and now octunnel's store does too).
    case openSSH(OpenSSHKnownHosts.Place)

    /// The words for the host-key stage.
    public var text: String {
        switch self {
        case .known: return "verified"
        case .firstUse: return "trusted on first use"
        case .openSSH(let place): return "verified by \(place.file) (line \(place.line)), recorded in octunnel's known_hosts"
        }
    }

    /// A short tag for JSON: known, first-use or openssh-known-hosts.
    public var tag: String {
        switch self {
        case .known: return "known"
        case .firstUse: return "first-use"
        case .openSSH: return "openssh-known-hosts"
        }
    }
}

/// Facts about a session worth telling the user.
public struct SessionInfo: Sendable {
    public let hostKey: SSHPublicKey
    public let newlyTrusted: Bool
    public let hostKeyTrust: HostKeyTrust
    public let keyExchange: String
    public let cipher: String
    public let mac: String
    public let serverBanner: String
    public let user: String
    public let clientKeyFingerprint: String
}

/// An authenticated session with its idle `session` channel, ready for the event loop.
public final class EstablishedSession: @unchecked Sendable {
    public let session: SSHSession
    let idleChannel: SSHChannel
    public let info: SessionInfo

    init(session: SSHSession, idleChannel: SSHChannel, info: SessionInfo) {
        self.session = session
        self.idleChannel = idleChannel
        self.info = info
    }
}

/// Opens a session step by step (resolve, TCP, handshake, host key, authentication), each
/// failure naming its layer. Blocking; the event loop runs it on a helper thread.
public struct SSHConnector: Sendable {
    public let settings: ConnectionSettings

    public init(settings: ConnectionSettings) { self.settings = settings }

    public func connect(onStage: (StageReport) -> Void = { _ in }) throws(OCTunnelError) -> EstablishedSession {
        let target = settings.target
        let identity = try clientIdentity()

        var clock = Date()
        func lap() -> Int {
            let now = Date()
            defer { clock = now }
            return Int((now.timeIntervalSince(clock) * 1000).rounded())
        }
        let addresses = try Sockets.resolve(host: target.host, port: target.port)
        onStage(StageReport(stage: .resolve, milliseconds: lap(), detail: "\(target.host): \(addresses.count) address(es)"))
        let fd = try Sockets.connect(host: target.host, port: target.port, addresses: addresses, timeout: settings.connectTimeout)
        onStage(StageReport(stage: .tcp, milliseconds: lap(), detail: "connected to \(target.hostPort)"))

        var banner = try peekBanner(fd)
        let session: SSHSession
        do {
            session = try SSHSession(socket: fd)
        } catch {
            close(fd)
            throw .sshFailure(host: target.host, port: target.port, detail: error.description)
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
        onStage(StageReport(stage: .handshake, milliseconds: lap(), detail: "\(banner ?? "SSH server"), \(keyExchange), \(cipher), \(mac)"))

        guard let hostKey = session.hostKey() else {
            session.close()
            throw .sshFailure(host: target.host, port: target.port, detail: "the server presented no host key")
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
        onStage(StageReport(stage: .hostKey, milliseconds: lap(), detail: "\(hostKey.type) \(hostKey.fingerprint) \(trust.text)\(noted)"))

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
            throw .sshFailure(host: target.host, port: target.port, detail: "cannot open the keepalive channel: \(error)")
        }
        onStage(StageReport(stage: .authentication, milliseconds: lap(), detail: "\(target.user) with \(identity.isAgent ? "ssh-agent key " : "")\(clientKey.fingerprint)"))
        let info = SessionInfo(hostKey: hostKey, newlyTrusted: trust == .firstUse, hostKeyTrust: trust, keyExchange: keyExchange, cipher: cipher, mac: mac,
                               serverBanner: banner ?? "", user: target.user, clientKeyFingerprint: clientKey.fingerprint)
        return EstablishedSession(session: session, idleChannel: idle, info: info)
    }

    /// Looks at the server's first bytes without consuming them: an SSH server greets first.
    /// It waits at most `bannerPeek` seconds: a multiplexer in front of sshd (sslh on port 443)
    /// waits for the client to speak first, 2 s by default, and every connection paid that
    /// whole wait when this one was 2 s. A greeting slower than that is read by libssh2's
    /// handshake instead (`SSHSession.serverBanner`).
    private func peekBanner(_ fd: Int32) throws(OCTunnelError) -> String? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard Sockets.pollRetrying(&pfd, milliseconds: Int32(min(Self.bannerPeek, settings.connectTimeout) * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_PEEK))
        guard count > 0 else {
            close(fd)
            throw .closedBeforeGreeting(host: settings.target.host, port: settings.target.port)
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
            close(fd)
            throw .closedBeforeGreeting(host: settings.target.host, port: settings.target.port)
        }
        if lines.count > 1 || count == buffer.count {
            close(fd)
            let shown = String(first.unicodeScalars.map { $0.value >= 0x20 && $0.value < 0x7f ? Character($0) : "." }.prefix(60))
            throw .notSSH(host: settings.target.host, port: settings.target.port, detail: "it answered \"\(shown)\" instead of an SSH greeting")
        }
        return nil
    }

    /// The line OpenSSH's sshd (9.8+) writes to a connection it drops before its greeting, then
    /// closes it: a penalized address (PerSourcePenalties) or past MaxStartups. Seen from Debian
    /// 13's sshd (OpenSSH 10.0p2); read as "not an SSH server" until OpenSSH10Tests provoked it.
    static let openSSHDrop = "Not allowed at this time"

    /// How long the connector waits for the server to greet before libssh2's handshake speaks.
    static let bannerPeek = 0.3

    private func classifyHandshakeFailure(_ error: LibSSH2Error, banner: String?) -> OCTunnelError {
        let target = settings.target
        switch error.code {
        case LIBSSH2_ERROR_KEX_FAILURE, LIBSSH2_ERROR_METHOD_NOT_SUPPORTED, LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE:
            var detail = "libssh2: \(error.message). Compare the server's HostKeyAlgorithms, KexAlgorithms, Ciphers and MACs "
                + "with what octunnel speaks on libssh2 \(LibSSH2.runningVersion) (docs/troubleshooting.md)."
            if let offers = ServerAlgorithmProbe.offers(host: target.host, port: target.port, timeout: settings.connectTimeout) {
                let gaps = AlgorithmGap.gaps(offered: offers.lists, spoken: Dictionary(uniqueKeysWithValues: AlgorithmGap.List.allCases.map {
                    ($0, SSHAlgorithms.spoken($0))
                }))
                if !gaps.isEmpty { detail = AlgorithmGap.explain(gaps, libssh2: LibSSH2.runningVersion) }
            }
            // The lists are the server's words, sent before its host key is checked.
            return .noCommonAlgorithms(host: target.host, port: target.port, detail: OutsideText.shown(detail, limit: 2048))
        case LIBSSH2_ERROR_TIMEOUT where banner == nil,
             LIBSSH2_ERROR_SOCKET_TIMEOUT where banner == nil:
            return .notSSH(host: target.host, port: target.port, detail: "it sent no SSH greeting within \(Int(settings.connectTimeout)) s")
        default:
            if banner == nil {
                return .notSSH(host: target.host, port: target.port, detail: "it did not answer the SSH greeting (\(error.message))")
            }
            return .sshFailure(host: target.host, port: target.port, detail: "handshake failed: \(error)")
        }
    }

    /// The host key types octunnel's store and OpenSSH's files hold for the target, to ask for first.
    private func knownHostKeyTypes() -> [String] {
        let target = settings.target
        var types = KnownHostsStore(path: settings.knownHostsPath).knownKeyTypes(host: target.host, port: target.port)
        for type in settings.openSSHKnownHosts?.knownKeyTypes(host: target.host, port: target.port) ?? [] where !types.contains(type) {
            types.append(type)
        }
        return types
    }

    /// Checks the host key against the store, then (for a host it does not know) OpenSSH's
    /// known_hosts files; says why the key is accepted, or throws before authentication.
    private func verifyHostKey(_ key: SSHPublicKey, notes: inout [String]) throws(OCTunnelError) -> HostKeyTrust {
        let target = settings.target
        let store = KnownHostsStore(path: settings.knownHostsPath)
        if let expected = settings.expectFingerprint, expected != key.fingerprint {
            throw .hostKeyNotExpected(host: target.host, port: target.port, expected: expected, presented: key.fingerprint)
        }
        switch try store.verdict(host: target.host, port: target.port, key: key) {
        case .trusted:
            return .known
        case .changed(let known):
            throw .hostKeyChanged(host: target.host, port: target.port, known: known, presented: key.fingerprint, file: store.path)
        case .revoked:
            throw .hostKeyRevoked(host: target.host, port: target.port, presented: key.fingerprint, file: store.path)
        case .unknown:
            break
        }
        switch settings.openSSHKnownHosts?.verdict(host: target.host, port: target.port, key: key, notes: &notes) ?? .notFound {
        case .verified(let place):
            try store.record(host: target.host, port: target.port, key: key)
            return .openSSH(place)
        case .differs(let place, let known):
            let name = settings.openSSHKnownHosts?.lookupName(host: target.host, port: target.port) ?? target.hostPort.knownHostsName
            throw .hostKeyDiffersFromOpenSSH(host: target.host, port: target.port, presented: key.fingerprint, known: known,
                                             file: place.file, line: place.line, name: name)
        case .revoked(let place):
            throw .hostKeyRevoked(host: target.host, port: target.port, presented: key.fingerprint, file: "\(place.file) line \(place.line)")
        case .notFound:
            guard settings.trustNew || settings.expectFingerprint != nil else {
                throw .unknownHostRefused(host: target.host, port: target.port, presented: key.fingerprint)
            }
            try store.record(host: target.host, port: target.port, key: key)
            return .firstUse
        }
    }

    /// What signs for us, found before any network traffic (a bad key file stops here).
    private enum ClientIdentity {
        case file(path: String, key: SSHPublicKey)
        case memory(UnlockedKey)
        case agent

        var isAgent: Bool { if case .agent = self { return true } else { return false } }
    }

    private func clientIdentity() throws(OCTunnelError) -> ClientIdentity {
        switch settings.authentication {
        case .agent:
            _ = try AgentCheck.socket()
            return .agent
        case .keyFile(let path):
            if let unlocked = settings.unlockedKey, unlocked.path == path { return .memory(unlocked) }
            let store = KeyStore(home: OctunnelHome(path: "/"))
            let loaded = try store.unlockPrivateKey(at: path) { (_: String) throws(PassphraseFailure) -> SecretBuffer in
                throw PassphraseFailure(reason: "it was not decrypted when octunnel started")
            }
            return .file(path: path, key: loaded.decoded.publicKey)
        }
    }

    /// Signs in; returns the public key the server accepted.
    private func authenticate(_ session: SSHSession, identity: ClientIdentity) throws(OCTunnelError) -> SSHPublicKey {
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
    private func signIn(as key: SSHPublicKey, path: String, _ session: SSHSession,
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
                                        restrictedLine: restrictedAuthorizedKeysLine(key, remoteHost: settings.remoteHost, remotePort: settings.remotePort))
            case LIBSSH2_ERROR_FILE:
                throw .badKeyFile(path: path, reason: "libssh2 cannot load it: \(error.message)")
            default:
                throw .sshFailure(host: target.host, port: target.port, detail: "authentication failed: \(error)")
            }
        }
    }

    /// Tries the agent's Ed25519 and ECDSA keys in its order; RSA and DSA keys are skipped
    /// (libssh2 1.10.0 signs RSA only with ssh-rsa, which OpenSSH 8.8 and later refuse).
    private func authenticateWithAgent(_ session: SSHSession) throws(OCTunnelError) -> SSHPublicKey {
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
                                      restrictedLine: restrictedAuthorizedKeysLine(first.key, remoteHost: settings.remoteHost, remotePort: settings.remotePort))
    }
}

/// Reads what a server offers in its KEXINIT, to say why nothing could be agreed.
enum ServerAlgorithmProbe {
    struct Offers {
        let keyExchange: String
        let hostKeys: String
        let ciphers: String
        let macs: String

        /// Each list as names.
        var lists: [AlgorithmGap.List: [String]] {
            func names(_ text: String) -> [String] { text.split(separator: ",").map(String.init) }
            return [.hostKey: names(hostKeys), .keyExchange: names(keyExchange), .cipher: names(ciphers), .mac: names(macs)]
        }
    }

    static func offers(host: String, port: Int, timeout: Double) -> Offers? {
        guard let fd = try? Sockets.connect(host: host, port: port, timeout: min(timeout, 5)) else { return nil }
        defer { close(fd) }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let hello = Array("SSH-2.0-octunnel_probe\r\n".utf8)
        guard Syscall.sendNoSignal(fd, hello, hello.count) == hello.count else { return nil }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var payloadStart: Int?
        while data.count < 65536 {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return nil }
            data += buffer[..<count]
            if payloadStart == nil, let range = findBannerEnd(data) { payloadStart = range }
            if let start = payloadStart, data.count >= start + 5 {
                var reader = SSHWireReader(data[start...])
                guard let length = try? reader.uint32(), length < 65536 else { return nil }
                guard data.count >= start + 4 + Int(length) else { continue }
                var packet = SSHWireReader(data[(start + 4)..<(start + 4 + Int(length))])
                guard (try? packet.byte()) != nil, (try? packet.byte()) == 20, (try? packet.raw(16)) != nil,
                      let kex = try? packet.text(), let hostKeys = try? packet.text(),
                      let ciphers = try? packet.text(), (try? packet.text()) != nil,
                      let macs = try? packet.text() else { return nil }
                return Offers(keyExchange: kex, hostKeys: hostKeys, ciphers: ciphers, macs: macs)
            }
        }
        return nil
    }

    private static func findBannerEnd(_ data: [UInt8]) -> Int? {
        var lineStart = 0
        for (index, byte) in data.enumerated() where byte == UInt8(ascii: "\n") {
            if data[lineStart...].starts(with: Array("SSH-".utf8)) { return index + 1 }
            lineStart = index + 1
        }
        return nil
    }
}
