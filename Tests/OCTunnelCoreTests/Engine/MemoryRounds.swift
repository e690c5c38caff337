import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport

/// The session driver's round, cut down to what forwards see, over a `MemorySession`: register,
/// poll (the forwards' real sockets, at most 10 ms), drive, free released channels; a failed
/// session is dropped as the driver drops it. Time is the monotonic clock, so an open's delay
/// is real time, as the forwards' own timestamps are.
final class MemoryRounds {
    let loop: EventLoop
    let session = MemorySession()
    private(set) var live: LiveSession?
    let forwards: [SessionForward]
    let events = Locked<[EngineEvent]>([])
    /// Why the session was dropped, once it was.
    private(set) var ended: SessionEnd?
    /// Where a burst's extra sessions come from (in memory), and the burst session itself
    /// once `allowBursts` made one: driven after each round as the driver drives it.
    let source = MemorySource()
    private(set) var burst: BurstSession?

    /// Lets a burst open an extra session (from `source`), closed after `idleClose` s of nothing.
    func allowBursts(idleClose: Double = BurstRule.idleClose) {
        burst = BurstSession(
            source: source, keepalive: 15, scratch: ScratchBuffer(), enabled: true,
            rule: BurstRule(idleClose: idleClose)
        ) { [events] event in events.update { $0.append(event) } }
    }

    init(forwards make: (@escaping @Sendable (EngineEvent) -> Void) throws -> [SessionForward]) throws {
        loop = try EventLoop()
        let events = self.events
        forwards = try make { event in events.update { $0.append(event) } }
    }

    /// A session comes up (the driver's `connectorFinished`): every forward hears of it.
    func start(keepalive: Double = 15) {
        let now = MonotonicClock.now()
        session.now = now
        let idle = session.newChannel(target: nil)
        let live = LiveSession(
            session: session, idleChannel: idle, scratch: ScratchBuffer(), keepaliveInterval: keepalive,
            highWater: SessionDriver.highWater, now: now)
        self.live = live
        for forward in forwards { forward.sessionStarted(live, now: now) }
    }

    /// One round.
    func round() throws {
        let now = MonotonicClock.now()
        session.now = now
        source.tick(now)
        burst?.take(forwards: forwards, now: now)
        let set = loop.pollSet
        set.reset()
        for forward in forwards { forward.register(in: set, live: live, now: now) }
        burst?.register(in: set, now: now)
        set.wake(at: now + 0.01)
        try loop.poll(now: now)
        let later = MonotonicClock.now()
        session.now = later
        source.tick(later)
        defer { burst?.drive(primary: live, forwards: forwards, now: later) }
        guard let live else {
            for forward in forwards { forward.drive(nil, now: later) }
            return
        }
        live.beginRound()
        // The driver reads the idle channel every round: a dead session shows there first.
        if case .failed(let code) = live.idleChannel.read(into: live.scratch.pointer, count: live.scratch.size) {
            live.fail(code)
        }
        for forward in forwards where live.isAlive { forward.drive(live, now: later) }
        if live.isAlive { live.freeReleasedChannels() }
        if let end = live.failure {
            session.close()
            live.dropReleasedChannels()
            self.live = nil
            ended = end
            for forward in forwards { forward.sessionLost(live, end) }
        }
    }

    /// Runs rounds until `done` holds; false when `seconds` passed first (a hang guard).
    @discardableResult
    func run(within seconds: Double = 10, until done: () -> Bool) throws -> Bool {
        try Self.repeatUntil(within: seconds, step: round, done: done)
    }

    /// Runs `step` until `done` holds; false when `seconds` passed first (a hang guard). The
    /// engine tests' loops (`MemoryRounds`' rounds, `MemoryDriver`'s turns) are this.
    static func repeatUntil(within seconds: Double, step: () throws -> Void, done: () -> Bool) rethrows -> Bool {
        let deadline = MonotonicClock.now() + seconds
        while !done() {
            if MonotonicClock.now() > deadline { return false }
            try step()
        }
        return true
    }

    /// Every forward stops (the end of a test).
    func stop() {
        for forward in forwards { forward.stop(.stopped) }
    }

    /// The events said so far.
    var said: [EngineEvent] { events.value }
}

extension MemoryRounds {
    /// A `tunnel up` with one forward to the VPS's 127.0.0.1:18080, listening on a free port;
    /// `warm` 0 turns the pool off.
    static func tunnel(warm: Int? = 0) throws -> (MemoryRounds, LocalForward) {
        let (options, forward) = tunnelOptions(warm: warm)
        var local: LocalForward?
        let rounds = try MemoryRounds { emit in
            let made = try LocalForward(options: options, forward: forward, emit: emit)
            local = made
            return [made]
        }
        return (rounds, local!)
    }

    /// The options of an in-memory `tunnel up` (the VPS at 127.0.0.1:22, never reached) with its
    /// one forward, OpenCode's: a free local port to the VPS's 127.0.0.1:18080.
    static func tunnelOptions(warm: Int?) -> (TunnelOptions, Forward) {
        let target = SSHTarget(user: "me", host: "127.0.0.1", port: 22)
        let connection = ConnectionSettings(
            target: target, authentication: .keyFile("/nonexistent"), knownHostsPath: "/nonexistent")
        let forward = Forward(
            direction: .local, listen: HostPort(host: "127.0.0.1", port: 0),
            target: HostPort(host: "127.0.0.1", port: 18080), isOpenCode: true)
        return (TunnelOptions(connection: connection, forwards: [forward], warm: warm), forward)
    }
}
