import Foundation
@testable import OCTunnelCore

// The engine's session in memory (the other side of Engine/EngineSession.swift), for unit tests
// of the forwards, the stream table and the driver's pieces without sshd: in the spirit of
// swift-nio's `EmbeddedChannel`, the test plays the VPS. Time is the test's (`now`): an open or
// a listen answers once `now` reaches its due time; channels have windows both ways, EOF, and
// a session that dies fails every call from then on. It also checks the rules libssh2 imposes
// and the engine must keep: one open or listen in flight per session, the same arguments
// repeated while it would block, no call on a freed channel.

/// libssh2's codes the in-memory session answers with (CLibSSH2 is not imported by tests).
enum MemoryCode {
    static let eagain: Int32 = -37
    static let socketDisconnect: Int32 = -13
    static let channelFailure: Int32 = -21
    static let requestDenied: Int32 = -32
    static let badUse: Int32 = -39
}

/// An SSH session in memory: the test plays the VPS through its methods.
final class MemorySession: EngineSession {
    /// The test's clock: opens and listens answer once it reaches their due time.
    var now = 0.0
    /// How long an open or a listen takes to be answered.
    var openDelay = 0.0
    /// How the VPS answers opens: nil opens, else the refusal's message ("connect failed", ...).
    var openRefusal: String?
    /// How the VPS answers listens: granted, refused with or without a policy message.
    var listenAnswer: ListenAnswer = .granted
    enum ListenAnswer { case granted, refused(String?) }
    /// The window each new channel gives us (bytes we may send before the VPS adjusts it).
    var initialSendWindow = 2 * 1024 * 1024

    /// Every channel opened, in order.
    private(set) var channels: [MemoryChannel] = []
    /// Every listener granted.
    private(set) var listeners: [MemoryListener] = []
    /// Rules of libssh2 the engine broke (a second open with other arguments while one was
    /// pending, a call on a freed channel): a test expects none.
    var misuses: [String] = []
    /// The open or listen in flight: its arguments and when it is answered.
    private var pending: (call: String, due: Double)?
    /// Whether an open or a listen is in flight.
    var isCallPending: Bool { pending != nil }
    /// While true, the VPS answers no open or listen, whatever its due time (a test's exact order).
    var holdsAnswers = false
    /// The most calls started while another was pending (1 when the engine keeps the rule).
    private(set) var opensStarted = 0
    private(set) var failure: Int32?
    private(set) var isClosed = false
    private(set) var disconnectReason: String?
    /// Bytes "received": grows with every answer and every byte the VPS sends.
    var receivedBytes = 0
    var outgoingBacklog = 0
    var socketTakesMore: Bool { true }
    var unacknowledgedBytes: Int? { 0 }
    var outgoingFailure: String { "the in-memory session died" }
    private lazy var pipe: (read: OwnedDescriptor, write: OwnedDescriptor) = { try! Syscall.pipe(nonBlocking: true) }()
    /// A descriptor for the loop to poll: readable once the session died (as a closed socket is).
    var socket: OwnedDescriptor { pipe.read }
    /// The VPS says nothing any more (the path is gone without a word): probes go unanswered.
    var silent = false

    /// The VPS goes away: every call fails from now on with `code`, and the socket polls readable.
    func die(code: Int32 = MemoryCode.socketDisconnect) {
        failure = code
        var byte: UInt8 = 1
        pipe.write.write(&byte, 1)
    }

    func newRound() {}
    func flushOutgoing() -> Bool { failure == nil }
    func acknowledgeReceived() {}

    func error(_ code: Int32, _ operation: String) -> LibSSH2Error {
        LibSSH2Error(
            code: code,
            message: code == MemoryCode.channelFailure ? "Channel open failure (\(openRefusal ?? "?"))" : "memory",
            operation: operation)
    }

    /// Starts the call `call` or continues it; true once it is due (answered).
    private func step(_ call: String) -> Bool {
        if let pending {
            if pending.call != call { misuses.append("\(call) while \(pending.call) was pending") }
            guard now >= pending.due, !holdsAnswers else { return false }
            self.pending = nil
            receivedBytes += 1
            return true
        }
        opensStarted += 1
        pending = (call, now + openDelay)
        return step(call)
    }

    func openDirect(host: String, port: Int, originHost: String, originPort: Int) -> ChannelOpen {
        if let failure { return .failed(error(failure, "open")) }
        guard step("direct-tcpip \(host):\(port) from \(originHost):\(originPort)") else { return .wouldBlock }
        if let openRefusal {
            return .failed(
                LibSSH2Error(
                    code: MemoryCode.channelFailure, message: "Channel open failure (\(openRefusal))",
                    operation: "open"))
        }
        return .opened(newChannel(target: HostPort(host: host, port: port)))
    }

    func openCommandChannel() -> ChannelOpen {
        if let failure { return .failed(error(failure, "open")) }
        guard step("session") else { return .wouldBlock }
        return .opened(newChannel(target: nil))
    }

    func requestListen(host: String, port: Int) -> ListenRequest {
        if let failure { return .failed(error(failure, "listen")) }
        guard step("tcpip-forward \(host):\(port)") else { return .wouldBlock }
        switch listenAnswer {
        case .granted:
            let listener = MemoryListener(session: self, boundPort: port == 0 ? 40000 + listeners.count : port)
            listeners.append(listener)
            return .listening(listener)
        case .refused(let policy):
            return .refused(policy: policy)
        }
    }

    /// A new channel, as the VPS confirmed it.
    func newChannel(target: HostPort?) -> MemoryChannel {
        let channel = MemoryChannel(session: self, target: target, sendWindow: initialSendWindow)
        channels.append(channel)
        return channel
    }

    func collectDebugMessages() {}
    func takeDebugMessages() -> [String] { [] }
    func setBlocking(_ blocking: Bool) {}
    func setTimeout(milliseconds: Int) {}
    func disconnect(reason: String) { disconnectReason = reason }
    @discardableResult func close() -> Int32 {
        isClosed = true
        return 0
    }
}

/// One channel in memory: what the engine wrote (`written`), what the VPS sends it (`deliver`),
/// EOF both ways, and the window we may fill (`grant` widens it).
final class MemoryChannel: EngineChannel {
    unowned let session: MemorySession
    /// Where a `direct-tcpip` channel goes (nil for a `session` channel).
    let target: HostPort?
    /// Everything the engine wrote on the channel.
    private(set) var written: [UInt8] = []
    private var incoming: [UInt8] = []
    private(set) var peerEOF = false
    private(set) var eofSent = false
    private(set) var isFreed = false
    private(set) var commands: [String] = []
    private(set) var probes = 0
    var sendWindow: Int
    /// Requests the test has answered on it (its own bookkeeping as the VPS).
    var answered = 0

    init(session: MemorySession, target: HostPort?, sendWindow: Int) {
        self.session = session
        self.target = target
        self.sendWindow = sendWindow
    }

    /// The VPS sends `bytes` on the channel.
    func deliver(_ bytes: [UInt8]) {
        incoming += bytes
        session.receivedBytes += bytes.count
    }

    /// The VPS sends EOF.
    func deliverEOF() {
        peerEOF = true
        session.receivedBytes += 1
    }

    /// The VPS adjusts the window by `bytes`.
    func grant(_ bytes: Int) {
        sendWindow += bytes
        session.receivedBytes += 1
    }

    private func check(_ call: String) -> Int32? {
        if isFreed { session.misuses.append("\(call) on a freed channel"); return MemoryCode.badUse }
        return session.failure
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> IOResult {
        if let code = check("read") { return .failed(code) }
        if incoming.isEmpty { return peerEOF ? .eof : .wouldBlock }
        let n = min(count, incoming.count)
        incoming.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: n) }
        incoming.removeFirst(n)
        return .bytes(n)
    }

    func write(_ buffer: UnsafeRawPointer, count: Int) -> IOResult {
        if let code = check("write") { return .failed(code) }
        if eofSent { return .failed(-27) }
        let n = min(count, sendWindow, 32_700)
        guard n > 0 else { return .wouldBlock }
        written += UnsafeRawBufferPointer(start: buffer, count: n)
        sendWindow -= n
        return .bytes(n)
    }

    func sendEOF() -> StepResult {
        if let code = check("send EOF") { return .failed(code) }
        eofSent = true
        return .done
    }

    var hasQueuedData: Bool { !isFreed && !incoming.isEmpty }
    var isEOF: Bool { isFreed || (incoming.isEmpty && peerEOF) }
    var windows: (queued: Int, receive: Int, send: Int) { (incoming.count, 2 * 1024 * 1024, sendWindow) }

    func probe(setenv name: String, value: String) -> StepResult {
        if let code = check("probe") { return .failed(code) }
        if session.silent { return .wouldBlock }
        probes += 1
        session.receivedBytes += 1
        return .done
    }

    func exec(_ command: String) -> Int32 {
        if let code = check("exec") { return code }
        commands.append(command)
        return 0
    }

    func free() -> StepResult {
        isFreed = true
        return .done
    }
}

/// One remote listen in memory: the test opens connections on it (`connect`).
final class MemoryListener: EngineListener {
    unowned let session: MemorySession
    let boundPort: Int
    private var queue: [MemoryChannel] = []
    private(set) var isCancelled = false

    init(session: MemorySession, boundPort: Int) {
        self.session = session
        self.boundPort = boundPort
    }

    /// Someone connected to the VPS's port: a `forwarded-tcpip` channel waits to be accepted.
    @discardableResult
    func connect() -> MemoryChannel {
        let channel = session.newChannel(target: nil)
        queue.append(channel)
        session.receivedBytes += 1
        return channel
    }

    func accept() -> ListenerAccept {
        if let failure = session.failure { return .failed(failure) }
        return queue.isEmpty ? .none : .accepted(queue.removeFirst())
    }

    func cancel() { isCancelled = true }
}
