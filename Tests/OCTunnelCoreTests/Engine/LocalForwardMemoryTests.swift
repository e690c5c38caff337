import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The laptop side's forward against the in-memory session: real client sockets, the VPS
/// played by the test (no sshd). The end-to-end tests against sshd stay beside these.
@Suite("LocalForward over an in-memory session", .ownThreads)
struct LocalForwardMemoryTests {
    /// A client of `forward`, with a hang guard on its reads and writes.
    static func client(of forward: LocalForward) throws -> ClientConnection {
        try #require(ClientConnection(port: forward.listenPort, timeout: 5))
    }

    /// An in-memory tunnel whose session `prepare` sets up, started, and one client of it; the
    /// caller finishes the client, then stops the rounds.
    static func started(prepare: (MemorySession) -> Void = { _ in }) throws -> (MemoryRounds, ClientConnection) {
        let (rounds, forward) = try MemoryRounds.tunnel()
        prepare(rounds.session)
        rounds.start()
        do {
            return (rounds, try Self.client(of: forward))
        } catch {
            rounds.stop()
            throw error
        }
    }

    @Test("a client's bytes reach its channel and the VPS's reach the client, EOF a half-close each way")
    func bytesBothWays() throws {
        let (rounds, client) = try Self.started(prepare: { $0.openDelay = 0.02 })
        defer { client.finish(); rounds.stop() }
        #expect(writeAll(client.fd, Array("hello".utf8)))
        shutdown(client.fd, Int32(SHUT_WR))
        let session = rounds.session
        #expect(try rounds.run { session.channels.count == 2 && session.channels[1].eofSent })
        let channel = session.channels[1]
        #expect(channel.target == HostPort(host: "127.0.0.1", port: 18080))
        #expect(channel.written == Array("hello".utf8))
        channel.deliver(Array("world".utf8))
        channel.deliverEOF()
        #expect(try rounds.run { rounds.said.contains { if case .clientClosed = $0 { true } else { false } } })
        #expect(readAll(client.fd) == Array("world".utf8))
        #expect(channel.isFreed)
        #expect(session.misuses.isEmpty)
    }

    @Test(
        "clients at once: one open in flight at a time, each its own channel, libssh2's rules kept",
        arguments: [0, nil] as [Int?])
    func clientsAtOnce(warm: Int?) throws {
        let (rounds, forward) = try MemoryRounds.tunnel(warm: warm)
        defer { rounds.stop() }
        rounds.session.openDelay = 0.015
        rounds.start()
        let clients = try (0..<5).map { _ in try Self.client(of: forward) }
        defer { clients.forEach { $0.finish() } }
        for (index, client) in clients.enumerated() { #expect(writeAll(client.fd, [UInt8(index)])) }
        let session = rounds.session
        let served = { Set(session.channels.compactMap { $0.written.first }) }
        #expect(try rounds.run { served().count == 5 })
        #expect(served() == Set(0..<5))
        #expect(session.channels.allSatisfy { $0.written.count <= 1 })
        #expect(session.misuses.isEmpty)
    }

    @Test("nothing listens behind the VPS: the client is closed and the user is told")
    func nothingListening() throws {
        let (rounds, client) = try Self.started(prepare: { $0.openRefusal = "connect failed" })
        defer { client.finish(); rounds.stop() }
        #expect(try rounds.run { rounds.said.contains { if case .clientDropped = $0 { true } else { false } } })
        #expect(rounds.said.contains { if case .nothingListening = $0 { true } else { false } })
        #expect(readAll(client.fd).isEmpty)
    }

    @Test("the channel's window closes: the client's bytes wait, unflagged, and move on when the VPS adjusts it")
    func windowClosesAndOpens() throws {
        let (rounds, client) = try Self.started(prepare: { $0.initialSendWindow = 1000 })
        defer { client.finish(); rounds.stop() }
        let payload = patternBytes(100_000, seed: 7)
        #expect(writeAll(client.fd, payload))
        let session = rounds.session
        #expect(try rounds.run { session.channels.count == 2 && session.channels[1].written.count == 1000 })
        let channel = session.channels[1]
        // Held for 1.5 s with the window shut: right to wait, so the stall watch says nothing.
        let until = MonotonicClock.now() + 1.5
        try rounds.run { MonotonicClock.now() > until }
        #expect(channel.written.count == 1000)
        channel.grant(1_000_000)
        #expect(try rounds.run { channel.written.count == payload.count })
        #expect(channel.written == payload)
        #expect(!rounds.said.contains { if case .streamStalled = $0 { true } else { false } })
    }

    @Test("the session dies: its streams end as lost, and their clients see the end")
    func sessionDies() throws {
        let (rounds, client) = try Self.started()
        defer { client.finish(); rounds.stop() }
        #expect(writeAll(client.fd, [1]))
        let session = rounds.session
        #expect(try rounds.run { session.channels.count == 2 && !session.channels[1].written.isEmpty })
        session.die()
        #expect(try rounds.run { rounds.ended != nil })
        #expect(
            rounds.said.contains {
                if case .clientDropped(_, let reason) = $0 { reason == "session lost" } else { false }
            })
        #expect(readAll(client.fd).isEmpty)
        #expect(session.isClosed)
    }
}

extension LocalForwardMemoryTests {
    @Test(
        "pooled channels the VPS closes after sitting idle (a server's idle timeout) are not all replaced: one is, until a client comes"
    )
    func idleClosedPoolKeepsOne() throws {
        let (rounds, forward) = try MemoryRounds.tunnel(warm: nil)
        defer { rounds.stop() }
        rounds.start()
        let session = rounds.session
        let direct = { session.channels.filter { $0.target != nil } }
        let open = { direct().filter { !$0.isFreed && !$0.peerEOF } }
        // A session's start expects a browser's six.
        #expect(try rounds.run { direct().count == 6 })
        // Past the quick close (2 s: that would mean nothing listens), the server closes them all as idle.
        let aged = MonotonicClock.now() + ChannelPool.quickClose + 0.1
        #expect(try rounds.run { MonotonicClock.now() > aged })
        for channel in direct() { channel.deliverEOF() }
        #expect(try rounds.run { direct().filter(\.isFreed).count == 6 })
        #expect(try rounds.run { open().count == 1 }, "one pooled channel is kept")
        #expect(
            !(try rounds.run(within: 0.5) { direct().count > 7 }), "the pool refilled in full: \(direct().count) opens")
        // A client comes: demand is live again, the pool refills to six behind it.
        let client = try Self.client(of: forward)
        defer { client.finish() }
        #expect(writeAll(client.fd, Array("hi".utf8)))
        #expect(
            try rounds.run { open().count == 7 }, "the client's channel and six pooled expected: \(open().count) open")
        #expect(session.misuses.isEmpty)
    }
}

/// Two forwards on one session take turns for its one open in flight (`OpenTurn`).
@Suite("two LocalForwards sharing an in-memory session", .ownThreads)
struct SharedSessionMemoryTests {
    @Test("clients of two forwards at once: each channel goes to its own forward's target, one open at a time")
    func twoForwardsTakeTurns() throws {
        let target = SSHTarget(user: "me", host: "127.0.0.1", port: 22)
        let connection = ConnectionSettings(
            target: target, authentication: .keyFile("/nonexistent"), knownHostsPath: "/nonexistent")
        let forwards = [18080, 3000].map { port in
            Forward(
                direction: .local, listen: HostPort(host: "127.0.0.1", port: 0),
                target: HostPort(host: "127.0.0.1", port: port),
                isOpenCode: port == 18080)
        }
        let options = TunnelOptions(connection: connection, forwards: forwards, warm: 0)
        var locals: [LocalForward] = []
        let rounds = try MemoryRounds { emit in
            locals = try forwards.map { try LocalForward(options: options, forward: $0, emit: emit) }
            return locals
        }
        defer { rounds.stop() }
        rounds.session.openDelay = 0.01
        rounds.start()
        var clients: [ClientConnection] = []
        defer { clients.forEach { $0.finish() } }
        for round in 0..<3 {
            for (index, local) in locals.enumerated() {
                let client = try #require(ClientConnection(port: local.listenPort, timeout: 5))
                #expect(writeAll(client.fd, [UInt8(index * 10 + round)]))
                clients.append(client)
            }
        }
        let session = rounds.session
        #expect(try rounds.run { session.channels.filter { !$0.written.isEmpty }.count == 6 })
        for channel in session.channels where !channel.written.isEmpty {
            let expected = channel.written[0] < 10 ? 18080 : 3000
            #expect(
                channel.target?.port == expected,
                "byte \(channel.written[0]) went to \(String(describing: channel.target))")
        }
        #expect(session.misuses.isEmpty)
    }
}
