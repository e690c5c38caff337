import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport

/// Hands a `SessionDriver` in-memory sessions: each attempt opens a new `MemorySession` (on the
/// connector's thread, as libssh2's connector runs), or fails as the test planned.
final class MemoryOpener: SessionOpener, @unchecked Sendable {
    private let lock = NSLock()
    private var planned: [any OCTunnelFailure] = []
    private var made: [MemorySession] = []
    private var attempts = 0
    /// Attempts still to hang until `releaseHeld` (a path gone under them), and the gate they wait at.
    private var holds = 0
    private let gate = NSCondition()
    private var released = false

    /// The next attempt hangs until `releaseHeld()`, as one whose path vanished waits out its timeout.
    func holdNext() {
        lock.lock(); defer { lock.unlock() }
        holds += 1
    }

    /// Lets every held attempt go on.
    func releaseHeld() {
        gate.lock(); defer { gate.unlock() }
        released = true
        gate.broadcast()
    }

    /// How long each new session's opens take to answer (a WAN's round trip).
    var openDelay: Double {
        get { lock.lock(); defer { lock.unlock() }; return delay }
        set { lock.lock(); delay = newValue; lock.unlock() }
    }
    private var delay = 0.0

    /// The next attempt fails with `error` (a replacement refused, the VPS away).
    func failNext(
        _ error: any OCTunnelFailure = ConnectError.sshFailure(
            host: "127.0.0.1", port: 22, detail: "the test refused this attempt")
    ) {
        lock.lock(); defer { lock.unlock() }
        planned.append(error)
    }

    /// Every session opened so far, oldest first.
    var sessions: [MemorySession] {
        lock.lock(); defer { lock.unlock() }
        return made
    }

    /// Attempts so far, failed ones included.
    var attemptCount: Int {
        lock.lock(); defer { lock.unlock() }
        return attempts
    }

    func open(onStage: (StageReport) -> Void) throws -> OpenedSession {
        lock.lock()
        attempts += 1
        let failure = planned.isEmpty ? nil : planned.removeFirst()
        let held = holds > 0
        if held { holds -= 1 }
        lock.unlock()
        if held {
            gate.lock()
            while !released { gate.wait() }
            gate.unlock()
        }
        if let failure { throw failure }
        let session = MemorySession()
        session.now = MonotonicClock.now()
        session.openDelay = openDelay
        let idle = session.newChannel(target: nil)
        lock.lock()
        made.append(session)
        lock.unlock()
        return OpenedSession(session: session, idleChannel: idle, info: Self.info)
    }

    /// What the driver tells of each in-memory session.
    static let info = SessionInfo(
        hostKey: SSHPublicKey(ed25519: [UInt8](repeating: 7, count: 32), comment: ""), newlyTrusted: false,
        hostKeyTrust: .known, keyExchange: "memory", cipher: "memory", mac: "memory",
        serverBanner: "SSH-2.0-memory", user: "me", clientKeyFingerprint: "SHA256:memory")
}

/// A whole `tunnel up` engine over in-memory sessions: the real `SessionDriver` and `LocalForward`
/// with real client sockets, the VPS played by the test through `opener.sessions`. The test runs
/// the driver's turns on its own thread (the poll sleeps at most 10 ms), so it may touch the
/// sessions between turns; each session's clock is the monotonic one.
final class MemoryDriver {
    let loop: EventLoop
    let opener = MemoryOpener()
    let driver: SessionDriver
    let local: LocalForward
    let events = Locked<[EngineEvent]>([])

    init(keepalive: Double = 15, warm: Int? = 0) throws {
        loop = try EventLoop()
        let (options, forward) = MemoryRounds.tunnelOptions(warm: warm)
        let connection = options.connection
        let events = self.events
        let emit: @Sendable (EngineEvent) -> Void = { event in events.update { $0.append(event) } }
        local = try LocalForward(options: options, forward: forward, emit: emit)
        driver = SessionDriver(
            settings: connection, keepalive: keepalive, exitOnFirstFailure: false, loop: loop, forwards: [local],
            opener: opener, emit: emit)
        driver.startConnector()
    }

    /// One turn of the driver.
    func turn() throws {
        for session in opener.sessions { session.now = MonotonicClock.now() }
        _ = try driver.turn(pollAtMost: 0.01)
    }

    /// Runs turns until `done` holds; false when `seconds` passed first (a hang guard).
    @discardableResult
    func run(within seconds: Double = 10, until done: () -> Bool) throws -> Bool {
        try MemoryRounds.repeatUntil(within: seconds, step: turn, done: done)
    }

    /// A client of the forward, with a hang guard on its reads and writes.
    func client() throws -> ClientConnection {
        guard let client = ClientConnection(port: local.listenPort, timeout: 5) else {
            throw MemoryDriverError.noClient
        }
        return client
    }

    /// The session `index` (0: the first opened), once it is up.
    func session(_ index: Int) throws -> MemorySession {
        try run { opener.sessions.count > index && driver.sessions.current != nil }
        guard opener.sessions.count > index else { throw MemoryDriverError.noSession(index) }
        return opener.sessions[index]
    }

    /// The driver stops, with its goodbye.
    func stop() {
        loop.requestStop()
        for _ in 0..<5 { if (try? driver.turn(pollAtMost: 0.01)) == false { return } }
    }

    /// The events said so far.
    var said: [EngineEvent] { events.value }
}

enum MemoryDriverError: Error {
    case noClient
    case noSession(Int)
}

extension MemorySession {
    /// The `direct-tcpip` channels opened on it (not the idle one).
    var directChannels: [MemoryChannel] { channels.filter { $0.target != nil } }
}
