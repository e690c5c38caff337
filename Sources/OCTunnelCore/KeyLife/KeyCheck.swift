import Foundation

/// What one key file may do on the VPS, asked of the VPS itself with a session signed in with
/// that key (`OneShotSession`), the way `tunnel up` and `home up` use it: does it sign in, may it
/// open the tunnel's forward, may it listen on the home's port. The host key is trusted as
/// `tunnel up` trusts it (`base`'s known_hosts, expected fingerprint, OpenSSH's files).
public struct KeyCheck: Sendable {
    /// The target and host key trust; its key is replaced by the one asked about.
    public let base: ConnectionSettings

    public init(base: ConnectionSettings) { self.base = base }

    /// `base` signing in with the key file at `keyPath` (an encrypted one asks its passphrase).
    public func settings(keyPath: String) throws -> ConnectionSettings {
        var settings = base
        settings.authentication = .keyFile(keyPath)
        settings.unlockedKey = nil
        return try settings.preparedForSignIn(prompt: PassphrasePrompt())
    }

    /// A session signed in with `keyPath`; the VPS refusing the key is `keyNotAuthorized` (77).
    /// An sshd that closes before its greeting (OpenSSH 9.8+ penalizing this address after a
    /// refused key, the rotation's own last check among them) is waited out, up to `penaltyWait`.
    public func session(keyPath: String) throws -> OneShotSession {
        let settings = try settings(keyPath: keyPath)
        let deadline = MonotonicClock.now() + Self.penaltyWait
        var pause = 1.0
        while true {
            do {
                return try OneShotSession(settings)
            } catch {
                guard case ConnectError.closedBeforeGreeting = error, MonotonicClock.now() + pause < deadline else {
                    throw error
                }
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 8)
            }
        }
    }

    /// How long a penalizing sshd is waited out (PerSourcePenalties' default for a refused key is 5 s).
    static let penaltyWait = 30.0

    /// Whether the VPS lets `keyPath` sign in: false only when it refuses the key; every other
    /// failure (no connection, host key, a bad key file) is thrown, never taken for a refusal.
    public func signsIn(keyPath: String) throws -> Bool {
        do {
            try session(keyPath: keyPath).close()
            return true
        } catch {
            if case SignInError.keyNotAuthorized = error { return false }
            throw error
        }
    }

    /// Signs in with `keyPath` and runs `command` (a verb of the key's forced command).
    public func run(keyPath: String, _ command: String) throws -> String {
        let session = try session(keyPath: keyPath)
        defer { session.close() }
        return try session.run(command)
    }

    /// What a proof found: the line does its job, or why not.
    public enum Proof: Equatable, Sendable {
        /// The key opened its forward, or was granted its listen; the words say how.
        case works(String)
        /// The VPS refused (the words are sshd's or libssh2's).
        case refused(String)
    }

    /// Signs in with `keyPath` and asks for what its line is for: `.tunnel`, a `direct-tcpip`
    /// open to `end` (opened, or the VPS's "connect failed" when nothing listens there, both
    /// mean allowed; "administratively prohibited" is refused); `.home`, a listen on `end`
    /// (granted, then cancelled; a port already taken, by the running `home up` say, is proved by
    /// the line's forced command answering `octunnel-inspect`, which only the home line has).
    public func prove(keyPath: String, role: Role, end: HostPort) throws -> Proof {
        try prove(keyPath: keyPath, role: role, ends: [end])
    }

    /// `prove` for every end of a line, in one session: works only if each does (the words of
    /// each joined), else the first refusal.
    public func prove(keyPath: String, role: Role, ends: [HostPort]) throws -> Proof {
        let session = try session(keyPath: keyPath)
        defer { session.close() }
        var words: [String] = []
        for (index, end) in ends.enumerated() {
            switch try prove(session, role: role, end: end, index: index) {
            case .works(let said): words.append(said)
            case .refused(let why): return .refused(why)
            }
        }
        return .works(words.joined(separator: "; "))
    }

    /// One end, on `session`; `index` is its place in the line (the reclaim program's verb names
    /// any listen but the first).
    private func prove(_ session: OneShotSession, role: Role, end: HostPort, index: Int) throws -> Proof {
        switch role {
        case .tunnel:
            switch session.tryOpen(end) {
            case .opened: return .works("its forward to \(end) opened")
            case .connectFailed: return .works("its forward to \(end) is allowed (nothing listens there now)")
            case .prohibited(let why):
                return .refused("the VPS forbids its forward to \(end) (\(OutsideText.shown(why, limit: 200)))")
            case .failed(let why): throw sshFailure("opening a forward to \(end): \(why)")
            }
        case .home:
            switch session.tryListen(end) {
            case .granted: return .works("its listen on \(end) was granted")
            case .forbidden(let why):
                return .refused("the VPS forbids it to listen on \(end) (sshd: \(OutsideText.shown(why, limit: 200)))")
            case .failed(let why): throw sshFailure("asking to listen on \(end): \(why)")
            case .busy:
                let verb = PortReclaimProgram.command(PortReclaimProgram.inspectVerb, listen: end, index: index)
                let output = try session.run(verb)
                guard let report = PortReclaimReport.parse(output), report.result != .refused else {
                    return .refused(
                        "\(end) is taken and the key's line did not answer `\(verb)`: it is not the home's line for that listen"
                    )
                }
                return .works("\(end) is held (\(report.summary)) and the key's line answered for it")
            }
        }
    }

    /// A session to the VPS that failed on its own (not the VPS's no), as `tunnel up` words it.
    private func sshFailure(_ detail: String) -> ConnectError {
        .sshFailure(host: base.target.host, port: base.target.port, detail: detail)
    }
}
