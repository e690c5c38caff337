import CLibSSH2
import Foundation

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
        let socket = try Sockets.connect(host: target.host, port: target.port, addresses: addresses, timeout: settings.connectTimeout)
        onStage(StageReport(stage: .tcp, milliseconds: lap(), detail: "connected to \(target.hostPort)"))

        var banner = try peekBanner(socket)
        let session: SSHSession
        do {
            session = try SSHSession(socket: socket)
        } catch {
            socket.close()
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
    private func peekBanner(_ socket: OwnedDescriptor) throws(OCTunnelError) -> String? {
        guard (try? socket.waitReadable(milliseconds: Int32(min(Self.bannerPeek, settings.connectTimeout) * 1000))) == true else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = socket.receive(&buffer, buffer.count, options: .peek).count
        guard count > 0 else {
            socket.close()
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
            socket.close()
            throw .closedBeforeGreeting(host: settings.target.host, port: settings.target.port)
        }
        if lines.count > 1 || count == buffer.count {
            socket.close()
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
}
