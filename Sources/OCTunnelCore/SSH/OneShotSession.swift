import CLibSSH2
import Foundation

/// One signed-in session for a few questions, blocking, then closed: what a key may do on the
/// VPS, asked the way `tunnel up` and `home up` would ask it (a `direct-tcpip` open, a
/// `tcpip-forward` request) and a command of the key's forced command run over an `exec`
/// channel. The key's own rotation and its proofs use it; nothing of the event loop is involved.
public final class OneShotSession {
    private let established: EstablishedSession
    private let target: SSHTarget
    private var session: SSHSession { established.session }
    /// Who signed in where, for messages.
    public var info: SessionInfo { established.info }

    /// Connects and signs in as `settings` say (`SSHConnector.connect`: the same host key trust
    /// as `tunnel up`); blocking, each call bounded by `settings.connectTimeout`.
    public init(_ settings: ConnectionSettings) throws {
        target = settings.target
        established = try SSHConnector(settings: settings).connect()
        session.setBlocking(true)
        session.setTimeout(milliseconds: Int(max(settings.connectTimeout, 1) * 1000))
    }

    /// Runs `command` on an `exec` channel (a forced command sees it as `SSH_ORIGINAL_COMMAND`)
    /// and returns its standard output, at most `limit` bytes (the rest read and dropped), once
    /// the VPS ends it. Stderr is dropped by libssh2. Past `seconds` it fails (`sshFailure`).
    public func run(_ command: String, limit: Int = 64 * 1024, seconds: Double = 60) throws -> String {
        session.setTimeout(milliseconds: Int(seconds * 1000))
        // Messages name the verb, not its arguments (a key's blob is long and says nothing).
        let verb = command.split(separator: " ").first.map(String.init) ?? command
        let channel: SSHChannel
        do {
            channel = try session.openSessionChannel()
        } catch {
            throw failure("cannot open a channel for `\(verb)`: \(error)")
        }
        defer { _ = channel.free() }
        guard let raw = channel.raw else { throw failure("the channel for `\(verb)` is gone") }
        libssh2_channel_handle_extended_data2(raw, LIBSSH2_CHANNEL_EXTENDED_DATA_IGNORE)
        let started = channel.exec(command)
        guard started == 0 else {
            throw failure(
                "the VPS refused to run `\(verb)`: \(session.error(started, "libssh2_channel_process_startup"))")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = MonotonicClock.now() + seconds
        while MonotonicClock.now() < deadline {
            let result = buffer.withUnsafeMutableBytes { channel.read(into: $0.baseAddress!, count: $0.count) }
            switch result {
            case .bytes(let count):
                output += buffer[..<min(count, max(0, limit - output.count))]
            case .wouldBlock:
                continue
            case .eof:
                return String(decoding: output, as: UTF8.self)
            case .failed(let code):
                throw failure(
                    "reading what `\(verb)` printed failed: \(session.error(code, "libssh2_channel_read_ex"))")
            }
        }
        throw failure("`\(verb)` did not finish within \(Int(seconds)) s")
    }

    /// What the VPS answered to a `direct-tcpip` open.
    public enum OpenAnswer: Equatable, Sendable {
        /// The channel opened: something listens there.
        case opened
        /// The VPS allowed it but could not connect (nothing listens there): allowed.
        case connectFailed(String)
        /// The VPS forbids this key to open it (`permitopen`, AllowTcpForwarding).
        case prohibited(String)
        /// Anything else, libssh2's words.
        case failed(String)
    }

    /// Asks the VPS to open a `direct-tcpip` channel to `target`, as `tunnel up` does for each
    /// client, and closes it again at once.
    public func tryOpen(_ target: HostPort) -> OpenAnswer {
        switch session.openDirectTCPIP(host: target.host, port: target.port, originHost: "127.0.0.1", originPort: 0) {
        case .opened(let channel):
            _ = channel.free()
            return .opened
        case .wouldBlock:
            return .failed("the open did not finish")
        case .failed(let error):
            let text = error.message.lowercased()
            if text.contains("administratively prohibited") { return .prohibited(error.message) }
            if text.contains("connect failed") || text.contains("connection refused") {
                return .connectFailed(error.message)
            }
            return .failed(error.description)
        }
    }

    /// What the VPS answered to a `tcpip-forward` request.
    public enum ListenAnswer: Equatable, Sendable {
        /// It listened (and was asked to stop again at once).
        case granted
        /// It said no without a reason: the port is taken (by a running `home up`, say).
        case busy
        /// It said no, naming a rule (sshd's debug message).
        case forbidden(String)
        case failed(String)
    }

    /// Asks the VPS to listen on `listen`, as `home up` does, and cancels the listen at once.
    public func tryListen(_ listen: HostPort) -> ListenAnswer {
        session.collectDebugMessages()
        switch session.listen(host: listen.host, port: listen.port) {
        case .listening(let listener):
            listener.cancel()
            return .granted
        case .refused(let policy?):
            return .forbidden(policy)
        case .refused(nil):
            return .busy
        case .wouldBlock:
            return .failed("the listen request did not finish")
        case .failed(let error):
            return .failed(error.description)
        }
    }

    /// Says goodbye and frees the session.
    public func close() {
        session.disconnect(reason: "octunnel done")
        session.close()
    }

    deinit { close() }

    private func failure(_ detail: String) -> ConnectError {
        .sshFailure(host: target.host, port: target.port, detail: detail)
    }
}
