import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Extra sessions for the engine's unit tests: each a `MemorySession` whose opens answer after
/// `openDelay`, ready `connectDelay` after the attempt started (the handshake and login a real
/// one costs), or refused with `refusal`.
final class MemorySource: ExtraSessionSource {
    var connectDelay = 0.0
    var openDelay = 0.0
    var refusal: AnyFailure?
    /// Every extra session made, in order, and how many attempts started.
    private(set) var made: [MemorySession] = []
    private(set) var attempts = 0
    private var startedAt: Double?
    private var now = 0.0

    /// The test's clock, for the attempt and every session made.
    func tick(_ now: Double) {
        self.now = now
        for session in made { session.now = now }
    }

    var isRunning: Bool { startedAt != nil }

    func start() {
        attempts += 1
        startedAt = MonotonicClock.now()
    }

    func take() -> Result<(session: any EngineSession, idleChannel: any EngineChannel), AnyFailure>? {
        guard let startedAt, now >= startedAt + connectDelay else { return nil }
        self.startedAt = nil
        if let refusal { return .failure(refusal) }
        let session = MemorySession()
        session.now = now
        session.openDelay = openDelay
        made.append(session)
        return .success((session, session.newChannel(target: nil)))
    }

    func abandon() { startedAt = nil }
}

/// A second session for bursts (`BurstSession`, `BurstRule`) over in-memory sessions: real client
/// sockets, the VPS played by the test, opens answering after a delay as over a WAN.
@Suite("a burst's second session over in-memory sessions", .ownThreads)
struct BurstSessionMemoryTests {
    /// One open's round trip in these tests (the rounds poll every 10 ms at most).
    static let roundTrip = 0.04

    /// A tunnel whose opens take `roundTrip` on every session (without a pool unless `warm` says),
    /// extra sessions allowed when `bursts`, each ready three round trips after it is asked for.
    static func tunnel(
        bursts: Bool, warm: Int? = 0, idleClose: Double = BurstRule.idleClose
    ) throws -> (MemoryRounds, LocalForward) {
        let (rounds, forward) = try MemoryRounds.tunnel(warm: warm)
        rounds.session.openDelay = roundTrip
        rounds.source.openDelay = roundTrip
        rounds.source.connectDelay = 3 * roundTrip
        if bursts { rounds.allowBursts(idleClose: idleClose) }
        rounds.start()
        return (rounds, forward)
    }

    /// `count` clients at once, each writing its own byte (its index) first.
    static func clients(_ count: Int, of forward: LocalForward) throws -> [ClientConnection] {
        let clients = try (0..<count).map { _ in try #require(ClientConnection(port: forward.listenPort, timeout: 5)) }
        for (index, client) in clients.enumerated() { #expect(writeAll(client.fd, [UInt8(index)])) }
        return clients
    }

    /// The channels with a client's byte on them, across `sessions`, by that byte.
    static func served(_ sessions: [MemorySession]) -> [UInt8: MemoryChannel] {
        var channels: [UInt8: MemoryChannel] = [:]
        for session in sessions {
            for channel in session.channels { if let byte = channel.written.first { channels[byte] = channel } }
        }
        return channels
    }

    /// A burst of 20 on a fresh tunnel with extra sessions (`tunnel`), each client on a channel of
    /// its own, across the driver's session and the extra one (returned).
    static func servedBurst(
        idleClose: Double = BurstRule.idleClose
    ) throws -> (MemoryRounds, LocalForward, [ClientConnection], extra: MemorySession) {
        let (rounds, forward) = try tunnel(bursts: true, idleClose: idleClose)
        let clients = try Self.clients(20, of: forward)
        let served = try rounds.run { Self.served([rounds.session] + rounds.source.made).count == 20 }
        guard served, let extra = rounds.source.made.first else {
            clients.forEach { $0.finish() }
            rounds.stop()
            throw MemoryDriverError.noSession(1)
        }
        return (rounds, forward, clients, extra)
    }

    /// Seconds until `count` clients of a fresh tunnel are each on a channel of their own.
    static func timeToServe(_ count: Int, bursts: Bool) throws -> (seconds: Double, rounds: MemoryRounds) {
        let (rounds, forward) = try tunnel(bursts: bursts)
        defer { rounds.stop() }
        let start = MonotonicClock.now()
        let clients = try Self.clients(count, of: forward)
        defer { clients.forEach { $0.finish() } }
        #expect(try rounds.run(within: 20) { served([rounds.session] + rounds.source.made).count == count })
        return (MonotonicClock.now() - start, rounds)
    }

    @Test("20 clients at once: the extra session halves the queue's round trips; libssh2's rules kept on both")
    func burstOfTwenty() throws {
        let alone = try Self.timeToServe(20, bursts: false)
        let paired = try Self.timeToServe(20, bursts: true)
        let extra = try #require(paired.rounds.source.made.first)
        let onExtra = extra.channels.filter { !$0.written.isEmpty }.count
        // One session: 20 round trips. Two, the second ready after 3: about 3 + 17/2.
        #expect(paired.rounds.source.made.count == 1)
        #expect(onExtra >= 6, "the extra session opened \(onExtra) of 20")
        #expect(paired.seconds < 0.75 * alone.seconds, "with the extra \(paired.seconds) s, alone \(alone.seconds) s")
        #expect(alone.rounds.source.attempts == 0)
        #expect(paired.rounds.session.misuses.isEmpty && extra.misuses.isEmpty)
        print(
            "burst of 20, open round trip \(Self.roundTrip) s: alone \(alone.seconds) s, "
                + "with the extra \(paired.seconds) s (\(onExtra) on it)")
    }

    @Test("bursts that come back before one session refills the pool: its refills count, and the extra helps refill it")
    func poolRefillsCallForExtra() throws {
        let (rounds, forward) = try Self.tunnel(bursts: true, warm: 20)
        defer { rounds.stop() }
        #expect(try rounds.run { forward.pool.count == 20 })
        #expect(rounds.source.attempts == 0, "the pool filled with nobody waiting: one session")
        let clients = try Self.clients(24, of: forward)
        defer { clients.forEach { $0.finish() } }
        let refilled = try rounds.run {
            Self.served([rounds.session] + rounds.source.made).count == 24 && forward.pool.count == 20
        }
        #expect(
            refilled,
            "served \(Self.served([rounds.session] + rounds.source.made).count) of 24, pool \(forward.pool.count) of 20"
        )
        let extra = try #require(rounds.source.made.first, "4 waiting and 20 refills: a second session")
        #expect(extra.channels.count - 1 >= 5, "the extra opened \(extra.channels.count - 1) of 24")
        #expect(rounds.session.misuses.isEmpty && extra.misuses.isEmpty)
    }

    @Test(
        "an open in flight on one session counts for the pool: the other does not add the 20th too (a pool of 21 for ever)"
    )
    func poolNeverOverfills() throws {
        let (rounds, forward) = try MemoryRounds.tunnel(warm: 20)
        defer { rounds.stop() }
        rounds.source.connectDelay = 0.05
        rounds.allowBursts()
        rounds.start()
        #expect(try rounds.run { forward.pool.count == 20 })
        // The driver's next open stays unanswered while the extra serves the clients and refills the pool.
        rounds.session.holdsAnswers = true
        let clients = try Self.clients(24, of: forward)
        defer { clients.forEach { $0.finish() } }
        let settled = try rounds.run {
            Self.served([rounds.session] + rounds.source.made).count == 24 && rounds.session.isCallPending
                && rounds.source.made.first.map { !$0.isCallPending } == true && forward.pool.count >= 19
        }
        #expect(
            settled,
            "served \(Self.served([rounds.session] + rounds.source.made).count) of 24, pool \(forward.pool.count)")
        // Still nothing more after a while: the extra leaves the 20th to the open in flight.
        let until = MonotonicClock.now() + 0.2
        try rounds.run { MonotonicClock.now() > until }
        #expect(forward.pool.count == 19)
        rounds.session.holdsAnswers = false
        #expect(try rounds.run { !rounds.session.isCallPending })
        let after = MonotonicClock.now() + 0.2
        try rounds.run { MonotonicClock.now() > after }
        #expect(forward.pool.count == 20, "the pool's size is 20")
        #expect(rounds.session.misuses.isEmpty && rounds.source.made.allSatisfy { $0.misuses.isEmpty })
    }

    @Test("a browser's six does not open a second session")
    func smallBurstStaysOnOne() throws {
        let served = try Self.timeToServe(6, bursts: true)
        #expect(served.rounds.source.attempts == 0)
    }

    @Test(
        "the burst is over: the extra closes with a goodbye once idle, its streams done; one session left, no wake-ups for it"
    )
    func extraClosesAfterBurst() throws {
        let (rounds, _, burst, extra) = try Self.servedBurst(idleClose: 0.5)
        var clients = burst
        defer { rounds.stop() }
        #expect(rounds.burst?.count == 1)
        // A stream on the extra keeps it up past idleClose.
        let until = MonotonicClock.now() + 1
        try rounds.run { MonotonicClock.now() > until }
        #expect(!extra.isClosed)
        // The clients and the VPS's ends close: nothing is left on the extra.
        clients.forEach { $0.finish() }
        clients = []
        for session in [rounds.session, extra] { session.channels.dropFirst().forEach { $0.deliverEOF() } }
        #expect(try rounds.run(within: 5) { extra.isClosed })
        #expect(extra.disconnectReason == "burst over")
        #expect(rounds.burst?.count == 0 && rounds.burst?.opened == 1)
        #expect(extra.channels.dropFirst().allSatisfy { $0.isFreed })
        #expect(!rounds.session.isClosed)
        // Idle after it: nothing of the burst left in the poll.
        let set = rounds.loop.pollSet
        set.reset()
        rounds.burst?.register(in: set, now: MonotonicClock.now())
        #expect(set.deadline == .infinity)
    }

    @Test("the extra session dies: its streams end, the driver's stay and move bytes both ways")
    func extraDies() throws {
        let (rounds, _, clients, extra) = try Self.servedBurst()
        defer { rounds.stop() }
        defer { clients.forEach { $0.finish() } }
        let onExtra = Set(Self.served([extra]).keys)
        let onFirst = Self.served([rounds.session])
        #expect(!onExtra.isEmpty && !onFirst.isEmpty)
        extra.die()
        #expect(try rounds.run { rounds.burst?.count == 0 })
        let dropped = rounds.said.count { if case .clientDropped(_, "session lost") = $0 { true } else { false } }
        #expect(dropped == onExtra.count)
        for (byte, channel) in onFirst {
            #expect(writeAll(clients[Int(byte)].fd, [byte, byte]))
            channel.deliver([byte &+ 100])
        }
        #expect(try rounds.run { onFirst.values.allSatisfy { $0.written.count == 3 } })
        for (byte, _) in onFirst { #expect(readAll(clients[Int(byte)].fd, limit: 1) == [byte &+ 100]) }
        #expect(rounds.ended == nil)
    }

    @Test("the driver's session dies while the extra lives: the extra's streams go on, a new client is served by it")
    func firstDiesExtraLives() throws {
        let (rounds, forward, burst, extra) = try Self.servedBurst()
        var clients = burst
        defer { rounds.stop() }
        defer { clients.forEach { $0.finish() } }
        let onExtra = Self.served([extra])
        rounds.session.die()
        #expect(try rounds.run { rounds.ended != nil })
        #expect(rounds.burst?.count == 1)
        for (byte, channel) in onExtra {
            #expect(writeAll(clients[Int(byte)].fd, [byte]))
            channel.deliver([byte &+ 100])
        }
        #expect(try rounds.run { onExtra.values.allSatisfy { $0.written.count == 2 } })
        for (byte, _) in onExtra { #expect(readAll(clients[Int(byte)].fd, limit: 1) == [byte &+ 100]) }
        let late = try #require(ClientConnection(port: forward.listenPort, timeout: 5))
        clients.append(late)
        #expect(writeAll(late.fd, [200]))
        #expect(try rounds.run { Self.served([extra])[200] != nil })
        #expect(extra.misuses.isEmpty)
    }

    @Test("a second session refused: said once, the first serves every client, none tried again soon")
    func extraRefused() throws {
        let (rounds, forward) = try MemoryRounds.tunnel(warm: 0)
        defer { rounds.stop() }
        rounds.session.openDelay = Self.roundTrip / 4
        rounds.source.refusal = AnyFailure(
            ConnectError.sshFailure(host: "127.0.0.1", port: 22, detail: "refused for the test"))
        rounds.allowBursts()
        rounds.start()
        for _ in 0..<2 {
            let clients = try Self.clients(20, of: forward)
            #expect(try rounds.run { Self.served([rounds.session]).count == 20 })
            clients.forEach { $0.finish() }
            rounds.session.channels.forEach { $0.deliverEOF() }
            #expect(
                try rounds.run { forward.channelQueue(now: MonotonicClock.now()) == 0 && !forward.holds(rounds.live!) })
        }
        #expect(rounds.source.attempts == 1)
        #expect(rounds.said.count { if case .warning = $0 { true } else { false } } == 1)
        #expect(rounds.ended == nil)
    }
}

/// The rule alone: when a second session pays and when it goes.
@Suite("BurstRule", .ownThreads)
struct BurstRuleTests {
    @Test("a queue of eight calls for a second session, seven does not; none for a minute after a failure")
    func threshold() {
        var rule = BurstRule()
        #expect(!rule.wantsExtra(queue: 7, now: 0))
        #expect(rule.wantsExtra(queue: 8, now: 0))
        rule.failed(now: 10)
        #expect(!rule.wantsExtra(queue: 20, now: 69))
        #expect(rule.wantsExtra(queue: 20, now: 70))
    }

    @Test(
        "over after idleClose of nothing waiting and nothing on it; a stream or a burst's queue keeps it, a short one not"
    )
    func closing() {
        var rule = BurstRule()
        rule.started(now: 100)
        #expect(!rule.isOver(now: 109.9))
        rule.note(queue: 0, held: true, now: 109)
        #expect(!rule.isOver(now: 118))
        rule.note(queue: 0, held: false, now: 118)
        rule.note(queue: 8, held: false, now: 118.5)
        rule.note(queue: 7, held: false, now: 120)
        #expect(!rule.isOver(now: 128))
        #expect(rule.isOver(now: 128.5))
        #expect(rule.closeAt == 128.5)
    }
}
