import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 56's "no cost when idle" for the burst's extra session, over in-memory sessions: it is
/// signed in for a burst only (not for a reconnect's pool refill), serves only the burst's
/// clients, keeps no pool after it, and `tunnel up`'s own event stream never stays on it.
@Suite("a burst's extra session costs nothing once the burst is over", .ownThreads)
struct BurstIdleMemoryTests {
    /// A planned reconnect under `waiting` clients that come as the new session is up (its pool
    /// of 20 empty, opens 40 ms each): only a real burst signs in an extra session.
    @Test(
        "a planned reconnect: 3 clients waiting on the new session's empty pool sign in no extra; 20 do",
        arguments: [(3, 0), (20, 1)])
    func reconnectRefillIsNoBurst(waiting: Int, extras: Int) throws {
        let driver = try MemoryDriver(warm: 20)
        defer { driver.stop() }
        driver.opener.openDelay = BurstSessionMemoryTests.roundTrip
        _ = try driver.session(0)
        #expect(try driver.run { driver.local.pool.count == 20 })
        driver.loop.requestReconnect()
        let second = try driver.session(1)
        let clients = try (0..<waiting).map { _ in try driver.client() }
        defer { clients.forEach { $0.finish() } }
        for (index, client) in clients.enumerated() { #expect(writeAll(client.fd, [UInt8(index)])) }
        let sessions = { [second] + driver.opener.sessions.dropFirst(2) }
        #expect(try driver.run { BurstSessionMemoryTests.served(sessions()).count == waiting })
        // The pool refills (20 opens, 0.8 s on one session) with nobody waiting: still no extra for 3.
        let settled = MonotonicClock.now() + 1.2
        try driver.run { MonotonicClock.now() > settled }
        #expect(driver.driver.burst.opened == extras, "extra sessions: \(driver.driver.burst.opened)")
        #expect(driver.opener.sessions.allSatisfy { $0.misuses.isEmpty })
    }

    /// A burst of 20 over a driver's session slower to open (0.2 s) than the extra (0.04 s), then
    /// one more client once the queue is short: the client an extra would serve first.
    static func burstThenOneMore() throws -> (MemoryRounds, LocalForward, late: ClientConnection, [ClientConnection]) {
        let (rounds, forward) = try BurstSessionMemoryTests.tunnel(bursts: true, idleClose: 0.5)
        rounds.session.openDelay = 5 * BurstSessionMemoryTests.roundTrip
        let clients = try BurstSessionMemoryTests.clients(20, of: forward)
        #expect(try rounds.run { BurstSessionMemoryTests.served([rounds.session] + rounds.source.made).count == 20 })
        let late = try #require(ClientConnection(port: forward.listenPort, timeout: 5))
        #expect(writeAll(late.fd, [200]))
        return (rounds, forward, late, clients)
    }

    @Test(
        "a client after the burst goes to the driver's session, however slower; the extra closes while its stream lives on"
    )
    func lateClientNeverPinsExtra() throws {
        let (rounds, forward, late, clients) = try Self.burstThenOneMore()
        defer { rounds.stop() }
        defer { late.finish() }
        let extra = try #require(rounds.source.made.first)
        #expect(try rounds.run { BurstSessionMemoryTests.served([rounds.session, extra])[200] != nil })
        #expect(BurstSessionMemoryTests.served([extra])[200] == nil, "the late client went on the extra")
        // The burst's clients end; the late one's stream lives on: the extra goes all the same.
        clients.forEach { $0.finish() }
        for session in [rounds.session, extra] {
            session.channels.dropFirst().filter { $0.written != [200] }.forEach { $0.deliverEOF() }
        }
        #expect(try rounds.run(within: 5) { extra.isClosed })
        #expect(extra.disconnectReason == "burst over")
        let live = try #require(rounds.live)
        #expect(!rounds.session.isClosed && forward.holds(live))
    }

    @Test("the event follower's stream, waiting among a burst's clients, is served by the driver's session only")
    func ownStreamNeverOnExtra() throws {
        let (rounds, forward) = try BurstSessionMemoryTests.tunnel(bursts: true)
        defer { rounds.stop() }
        rounds.session.openDelay = 5 * BurstSessionMemoryTests.roundTrip
        rounds.source.connectDelay = BurstSessionMemoryTests.roundTrip
        // Among the burst, early in the queue: the extra would take it before the driver's slow opens.
        let own = try #require(ClientConnection(port: forward.listenPort, timeout: 5))
        defer { own.finish() }
        forward.keepOffExtra(port: Sockets.localPort(of: own.fd))
        #expect(writeAll(own.fd, [200]))
        let clients = try BurstSessionMemoryTests.clients(20, of: forward)
        defer { clients.forEach { $0.finish() } }
        let sessions = { [rounds.session] + rounds.source.made }
        #expect(try rounds.run { BurstSessionMemoryTests.served(sessions()).count == 21 })
        #expect(BurstSessionMemoryTests.served([rounds.session])[200] != nil, "the follower's stream went on the extra")
        #expect(!rounds.source.made.isEmpty)
    }

    @Test("the follower's stream known only once on the extra: ended when the burst is over, so the extra closes")
    func ownStreamMovedOff() throws {
        let (rounds, forward, clients, extra) = try BurstSessionMemoryTests.servedBurst(idleClose: 0.5)
        defer { rounds.stop() }
        defer { clients.forEach { $0.finish() } }
        let (byte, _) = try #require(BurstSessionMemoryTests.served([extra]).first)
        forward.keepOffExtra(port: Sockets.localPort(of: clients[Int(byte)].fd))
        // The rest of the burst ends; only the follower's stream holds the extra.
        for (other, channel) in BurstSessionMemoryTests.served([rounds.session, extra]) where other != byte {
            clients[Int(other)].finish()
            channel.deliverEOF()
        }
        #expect(try rounds.run(within: BurstRule.poolHelp + 3) { extra.isClosed })
        let moved = rounds.said.count {
            if case .clientDropped(_, "moved off the burst session") = $0 { true } else { false }
        }
        #expect(moved == 1)
        #expect(readAll(clients[Int(byte)].fd, limit: 1).isEmpty, "the follower sees its stream end and asks again")
    }

    @Test(
        "an event stream opened right after a burst of 20 (among its queue) may stay on the extra: how often, and status says it"
    )
    func streamRightAfterBurst() throws {
        let runs = 10
        var onExtra = 0
        for _ in 0..<runs {
            let (rounds, forward) = try BurstSessionMemoryTests.tunnel(bursts: true)
            defer { rounds.stop() }
            let clients = try BurstSessionMemoryTests.clients(20, of: forward)
            let stream = try #require(ClientConnection(port: forward.listenPort, timeout: 5))
            defer { stream.finish() }
            #expect(writeAll(stream.fd, [200]))
            let sessions = { [rounds.session] + rounds.source.made }
            #expect(try rounds.run { BurstSessionMemoryTests.served(sessions()).count == 21 })
            clients.forEach { $0.finish() }
            for session in sessions() {
                session.channels.dropFirst().filter { $0.written != [200] }.forEach { $0.deliverEOF() }
            }
            guard let extra = rounds.source.made.first, BurstSessionMemoryTests.served([extra])[200] != nil else {
                continue
            }
            onExtra += 1
            #expect(try rounds.run { forward.connectionsOnExtra == 1 }, "status names the stream keeping the extra")
            #expect(!extra.isClosed)
        }
        print("an event stream opened right after a burst of 20: on the extra in \(onExtra) of \(runs) runs")
    }

    @Test(
        "once the burst is over the extra hands its pooled channels back, and they are not opened again until a client comes"
    )
    func extraKeepsNoPool() throws {
        let (rounds, forward) = try BurstSessionMemoryTests.tunnel(bursts: true, warm: nil)
        defer { rounds.stop() }
        let clients = try BurstSessionMemoryTests.clients(24, of: forward)
        let sessions = { [rounds.session] + rounds.source.made }
        #expect(try rounds.run { BurstSessionMemoryTests.served(sessions()).count == 24 })
        let extra = try #require(rounds.burst?.extra)
        #expect(try rounds.run { forward.pool.count(on: extra) > 0 }, "the extra helps refill the pool")
        clients.forEach { $0.finish() }
        for session in sessions() {
            session.channels.dropFirst().filter { !$0.written.isEmpty }.forEach { $0.deliverEOF() }
        }
        // poolHelp after the burst its pool goes back, while it is still up (idleClose is 10 s).
        #expect(try rounds.run(within: BurstRule.poolHelp + 2) { forward.pool.count(on: extra) == 0 })
        #expect(rounds.burst?.extra === extra)
        let opens = rounds.session.opensStarted
        let pooled = forward.pool.count
        let until = MonotonicClock.now() + 0.5
        try rounds.run { MonotonicClock.now() > until }
        #expect(rounds.session.opensStarted == opens, "the driver's session opened what the extra handed back")
        #expect(forward.pool.count == pooled)
        // A client comes: the pool follows demand again.
        let late = try #require(ClientConnection(port: forward.listenPort, timeout: 5))
        defer { late.finish() }
        #expect(writeAll(late.fd, [200]))
        #expect(try rounds.run { forward.pool.count > pooled })
    }

    @Test("the far side closes a pooled channel as idle: the surplus goes in that round, one channel is kept")
    func idleCloseDropsSurplusAtOnce() throws {
        let (rounds, forward) = try MemoryRounds.tunnel(warm: nil)
        defer { rounds.stop() }
        rounds.start()
        let direct = { rounds.session.directChannels }
        // A session's start expects a browser's six.
        #expect(try rounds.run { forward.pool.count == 6 })
        let aged = MonotonicClock.now() + ChannelPool.quickClose + 0.1
        #expect(try rounds.run { MonotonicClock.now() > aged })
        // One closes (nginx's 60 s idle timeout); the other five are as old and would go one by one.
        direct()[0].deliverEOF()
        try rounds.round()
        #expect(direct().filter(\.isFreed).count == 5, "freed: \(direct().filter(\.isFreed).count)")
        #expect(forward.pool.count == 1 && !direct()[5].isFreed, "the newest is kept")
        #expect(rounds.session.misuses.isEmpty)
    }

    @Test("status says what keeps the extra session up: the connections opened in its burst, as JSON and for people")
    func statusNamesWhatKeepsExtra() throws {
        var snapshot = try StatusSnapshotTests.connected()
        (snapshot.sessions, snapshot.burstSessions, snapshot.burstSessionConnections) = (2, 1, 1)
        let line = snapshot.humanLines(now: StatusSnapshotTests.now).first { $0.contains("sessions  ") }
        #expect(
            line?.hasSuffix("· the extra one kept by 1 connection opened in its burst") == true, "\(line ?? "none")")
        let decoded = try #require(StatusSnapshot(jsonText: snapshot.jsonText))
        #expect(decoded.burstSessionConnections == 1)
        snapshot.burstSessionConnections = 0
        #expect(!snapshot.humanLines(now: StatusSnapshotTests.now).joined().contains("kept by"))
    }
}
