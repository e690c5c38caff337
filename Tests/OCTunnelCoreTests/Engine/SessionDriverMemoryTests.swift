import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The whole session driver over in-memory sessions (`MemoryDriver`): reconnects, keepalive and
/// make before break without sshd. The end-to-end tests against sshd stay beside these.
@Suite("SessionDriver over in-memory sessions", .ownThreads)
struct SessionDriverMemoryTests {
    /// A client that has sent `bytes` and whose channel on `session` has them.
    static func request(
        _ driver: MemoryDriver, on session: MemorySession, _ bytes: [UInt8]
    ) throws -> (ClientConnection, MemoryChannel) {
        let client = try driver.client()
        #expect(writeAll(client.fd, bytes))
        let carried = try driver.run { session.directChannels.contains { $0.written == bytes } }
        guard carried, let channel = session.directChannels.first(where: { $0.written == bytes }) else {
            client.finish()
            throw MemoryDriverError.noClient
        }
        return (client, channel)
    }

    /// The first session once up, with a client's stream on it (its byte 1) and that stream's channel.
    static func firstWithStream(_ driver: MemoryDriver) throws -> (MemorySession, ClientConnection, MemoryChannel) {
        let first = try driver.session(0)
        let (client, channel) = try request(driver, on: first, [1])
        return (first, client, channel)
    }

    /// The first session with a client's stream on it (its byte 1), then replaced by a planned
    /// reconnect: it drains, keeping that stream (the caller finishes the client).
    static func drainingWithStream(_ driver: MemoryDriver) throws -> (MemorySession, ClientConnection) {
        let (first, old, _) = try firstWithStream(driver)
        driver.loop.requestReconnect()
        #expect(try driver.run { driver.driver.sessions.draining.count == 1 })
        return (first, old)
    }

    /// Reads from `client` until `count` bytes came, running the driver's turns meanwhile.
    static func read(_ driver: MemoryDriver, _ client: ClientConnection, count: Int) throws -> [UInt8] {
        var got: [UInt8] = []
        try driver.run {
            got += readAvailable(client); return got.count >= count
        }
        return got
    }

    @Test("the session dies: its stream ends as lost, the driver connects again, and new clients go to the new session")
    func reconnectAfterDeath() throws {
        let driver = try MemoryDriver()
        defer { driver.stop() }
        let (first, old, _) = try Self.firstWithStream(driver)
        defer { old.finish() }
        first.die()
        #expect(
            try driver.run {
                driver.said.contains { if case .clientDropped(_, "session lost") = $0 { true } else { false } }
            })
        #expect(first.isClosed)
        #expect(try driver.run { driver.opener.sessions.count == 2 && driver.driver.sessions.current != nil })
        let second = driver.opener.sessions[1]
        let (new, channel) = try Self.request(driver, on: second, [2])
        defer { new.finish() }
        channel.deliver([3])
        #expect(try Self.read(driver, new, count: 1) == [3])
        #expect(driver.driver.sessions.count == 1)
        #expect(first.misuses.isEmpty && second.misuses.isEmpty)
    }

    @Test(
        "a planned reconnect: new clients go to the new session once up; the old keeps its stream, pumped both ways, until it ends"
    )
    func plannedReconnectKeepsStreams() throws {
        let driver = try MemoryDriver()
        defer { driver.stop() }
        let first = try driver.session(0)
        let (old, oldChannel) = try Self.request(driver, on: first, Array("old".utf8))
        defer { old.finish() }
        driver.loop.requestReconnect()
        #expect(
            try driver.run {
                driver.opener.sessions.count == 2 && driver.driver.sessions.current !== nil
                    && driver.driver.sessions.draining.count == 1
            })
        let second = driver.opener.sessions[1]
        let status = driver.driver.statusSnapshot(
            for: StatusEndpoint(
                directory: OctunnelDirectory(path: "/nonexistent"), role: .tunnel,
                profile: .default))
        #expect(status.sessions == 2 && status.sessionsDraining == 1)
        #expect(status.humanLines().contains("  sessions    2 · 1 replaced, keeping its connections until they end"))
        let (new, _) = try Self.request(driver, on: second, Array("new".utf8))
        defer { new.finish() }
        // The old stream still moves both ways on the old session.
        #expect(writeAll(old.fd, Array("+more".utf8)))
        #expect(try driver.run { oldChannel.written == Array("old+more".utf8) })
        oldChannel.deliver(Array("answer".utf8))
        #expect(try Self.read(driver, old, count: 6) == Array("answer".utf8))
        #expect(!first.isClosed)
        #expect(!driver.said.contains { if case .clientDropped = $0 { true } else { false } })
        // Its stream ends: the old session says goodbye and goes.
        shutdown(old.fd, Int32(SHUT_WR))
        oldChannel.deliverEOF()
        #expect(try driver.run { first.isClosed })
        #expect(first.disconnectReason == SessionEnd.replaced.text)
        #expect(driver.driver.sessions.count == 1)
        #expect(!second.isClosed)
        #expect(first.misuses.isEmpty && second.misuses.isEmpty)
    }

    /// What the client's socket holds now, without waiting.
    static func readAvailable(_ client: ClientConnection) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(client.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? Array(buffer[..<count]) : []
    }

    @Test("a planned reconnect whose new session fails: the current one stays and serves, said once")
    func failedReplacementKeepsCurrent() throws {
        let driver = try MemoryDriver()
        defer { driver.stop() }
        let (first, client, channel) = try Self.firstWithStream(driver)
        defer { client.finish() }
        driver.opener.failNext()
        driver.loop.requestReconnect()
        #expect(try driver.run { driver.opener.attemptCount == 2 && !driver.driver.connector.isRunning })
        try driver.run { driver.said.contains { if case .warning = $0 { true } else { false } } }
        let warnings = driver.said.compactMap { if case .warning(let text) = $0 { text } else { nil } }
        #expect(warnings.count == 1 && warnings[0].contains("the current one stays"), "\(warnings)")
        #expect(driver.driver.sessions.current?.session === first)
        channel.deliver([9])
        #expect(try Self.read(driver, client, count: 1) == [9])
        let (other, _) = try Self.request(driver, on: first, [2])
        other.finish()
        #expect(driver.opener.sessions.count == 1 && !first.isClosed)
    }

    @Test(
        "a wake while a planned reconnect's attempt hangs: the attempt is abandoned, the live session probed, a new one replaces it"
    )
    func wakeDuringReplacement() throws {
        let driver = try MemoryDriver()
        defer { driver.stop() }
        defer { driver.opener.releaseHeld() }
        let first = try driver.session(0)
        driver.opener.holdNext()
        driver.loop.requestReconnect()
        #expect(try driver.run { driver.opener.attemptCount == 2 })
        let hung = driver.driver.connector.startedAt
        // In memory the live session has no address: the cause is decided by a probe, answered by the VPS.
        driver.driver.reconnect.notice(.wake(12), since: MonotonicClock.now())
        #expect(hung < driver.driver.reconnect.pending?.since ?? 0)
        #expect(
            try driver.run { driver.driver.sessions.current.map { $0.session !== first } ?? false },
            "the replacement hung: \(driver.opener.attemptCount) attempts, \(driver.said.suffix(3))")
        #expect(driver.opener.attemptCount == 3)
        let second = try #require(driver.driver.sessions.current?.session as? MemorySession)
        // The old session held no stream: it says goodbye as soon as it is replaced.
        #expect(try driver.run { first.isClosed })
        #expect(first.disconnectReason == SessionEnd.replaced.text)
        let probing = driver.said.contains {
            if case .roaming(.probing(.wake(12), _)) = $0 { true } else { false }
        }
        #expect(probing, "\(driver.said.suffix(4))")
        #expect(first.misuses.isEmpty && second.misuses.isEmpty)
    }

    @Test("a draining session whose path is gone goes alone, with its stream; the current session and its stream stay")
    func drainingSessionDies() throws {
        let driver = try MemoryDriver()
        defer { driver.stop() }
        let (first, old) = try Self.drainingWithStream(driver)
        defer { old.finish() }
        let second = driver.opener.sessions[1]
        let (new, newChannel) = try Self.request(driver, on: second, [2])
        defer { new.finish() }
        first.die()
        #expect(try driver.run { first.isClosed })
        #expect(driver.said.contains { if case .clientDropped(_, "session lost") = $0 { true } else { false } })
        #expect(driver.driver.sessions.count == 1 && driver.driver.sessions.current?.session === second)
        newChannel.deliver([5])
        #expect(try Self.read(driver, new, count: 1) == [5])
        #expect(driver.opener.attemptCount == 2, "no reconnect for a draining session's end")
    }

    @Test(
        "the new session dies while the old one drains: the old one takes new clients again, no reconnect from nothing")
    func newSessionDiesOldServesAgain() throws {
        let driver = try MemoryDriver()
        defer { driver.stop() }
        let (first, old) = try Self.drainingWithStream(driver)
        defer { old.finish() }
        let second = driver.opener.sessions[1]
        second.die()
        #expect(try driver.run { second.isClosed })
        #expect(driver.driver.sessions.current?.session === first && driver.driver.sessions.draining.isEmpty)
        let (again, _) = try Self.request(driver, on: first, [2])
        again.finish()
        let warnings = driver.said.compactMap { if case .warning(let text) = $0 { text } else { nil } }
        #expect(warnings.contains { $0.contains("the one it replaced serves again") }, "\(warnings)")
        #expect(driver.opener.attemptCount == 2)
    }

    @Test("keepalive per session: a draining session is probed too, and one that falls silent is dropped alone")
    func keepalivePerSession() throws {
        let driver = try MemoryDriver(keepalive: 0.2)
        defer { driver.stop() }
        let (first, old) = try Self.drainingWithStream(driver)
        defer { old.finish() }
        let idle = first.channels[0]
        let before = idle.probes
        #expect(try driver.run { idle.probes >= before + 2 })
        first.silent = true
        // Silent for 3 intervals and 1 s: dropped, while the current session lives on.
        #expect(try driver.run(within: 5) { first.isClosed })
        #expect(driver.driver.sessions.count == 1 && !driver.opener.sessions[1].isClosed)
        #expect(driver.opener.sessions[1].channels[0].probes > 0)
    }

    /// Planned reconnects while a client asks `count` times, every `every` s (`RequestLoop`), the VPS
    /// answering (`VPSPlay`): `reconnects` of them, the first `first` s in, then `spacing()` apart;
    /// `eachTurn` runs before each of the driver's turns. Every request must be served, with
    /// libssh2's rules kept on every session. Returns how many reconnects were asked.
    static func reconnectsUnderRequests(
        _ driver: MemoryDriver, every: Double, count: Int, reconnects: Int, within seconds: Double, first: Double,
        spacing: () -> Double, eachTurn: () -> Void = {}
    ) throws -> Int {
        _ = try driver.session(0)
        let port = driver.local.listenPort
        let outcome = Locked<(served: Int, failed: [String])>((0, []))
        let finished = Locked(false)
        let requester = Thread {
            RequestLoop.run(port: port, every: every, count: count, outcome: outcome)
            finished.value = true
        }
        requester.start()
        var asked = 0
        var next = MonotonicClock.now() + first
        #expect(
            try driver.run(within: seconds) {
                eachTurn()
                VPSPlay.answerRequests(on: driver.opener.sessions)
                if asked < reconnects && MonotonicClock.now() >= next && !driver.driver.connector.isRunning {
                    driver.loop.requestReconnect()
                    asked += 1
                    next = MonotonicClock.now() + spacing()
                }
                return finished.value
            })
        let result = outcome.value
        #expect(
            result.failed.isEmpty, "\(result.failed.count) failed, \(result.served) served: \(result.failed.prefix(5))")
        #expect(result.served == count)
        #expect(
            driver.opener.sessions.allSatisfy { $0.misuses.isEmpty },
            "\(driver.opener.sessions.flatMap(\.misuses).prefix(3))")
        return asked
    }

    @Test(
        "five planned reconnects while a client requests every 50 ms, each on a kept-open connection or a new one: none fails"
    )
    func fiveReconnectsUnderRequests() throws {
        let driver = try MemoryDriver()
        defer { driver.stop() }
        // The kept-open connection holds the first session: it drains all along, others join it.
        let reconnects = try Self.reconnectsUnderRequests(
            driver, every: 0.05, count: 60, reconnects: 5, within: 30, first: 0.3, spacing: { 0.4 })
        #expect(reconnects == 5)
        #expect(driver.opener.sessions.count == 6)
        // Sessions that drained are gone; the first still holds the kept-open connection until it ends.
        #expect(try driver.run { driver.driver.sessions.count <= 2 })
    }

    @Test(
        "thirty planned reconnects at random spacing, opens answering after 10-60 ms, the pool on: no request lost or late"
    )
    func manyReconnectsWithPoolAndSlowOpens() throws {
        let driver = try MemoryDriver(warm: nil)
        defer { driver.stop() }
        var generator = SystemRandomNumberGenerator()
        let reconnects = try Self.reconnectsUnderRequests(
            driver, every: 0.02, count: 400, reconnects: 30, within: 60, first: 0.2,
            spacing: { Double.random(in: 0.02...0.3, using: &generator) },
            eachTurn: {
                for session in driver.opener.sessions where session.openDelay == 0 {
                    session.openDelay = Double.random(in: 0.01...0.06, using: &generator)
                }
            })
        #expect(reconnects == 30)
    }
}

/// The VPS's side of `RequestLoop`: every channel that has carried a whole "ping\n" request gets
/// its "pong\n"; a channel whose client sent EOF gets EOF back.
enum VPSPlay {
    static func answerRequests(on sessions: [MemorySession]) {
        for session in sessions where !session.isClosed {
            for channel in session.directChannels where !channel.isFreed {
                let requests = channel.written.count / 5
                while channel.answered < requests {
                    channel.deliver(Array("pong\n".utf8))
                    channel.answered += 1
                }
                if channel.eofSent && !channel.peerEOF { channel.deliverEOF() }
            }
        }
    }
}

/// A client's request loop: every `every` seconds one "ping\n" expecting "pong\n", alternately on
/// a connection kept open across requests (as a browser's) and on a new one closed after it.
enum RequestLoop {
    static func run(port: Int, every: Double, count: Int, outcome: Locked<(served: Int, failed: [String])>) {
        var kept: ClientConnection?
        for index in 0..<count {
            let started = MonotonicClock.now()
            let keep = index % 2 == 0
            let client =
                keep ? (kept ?? ClientConnection(port: port, timeout: 5)) : ClientConnection(port: port, timeout: 5)
            if keep { kept = client }
            var problem: String?
            if let client {
                if !writeAll(client.fd, Array("ping\n".utf8)) {
                    problem = "request \(index): write failed"
                } else if readAll(client.fd, limit: 5) != Array("pong\n".utf8) {
                    problem = "request \(index): no answer"
                }
                if !keep { client.finish() }
            } else {
                problem = "request \(index): no connection"
            }
            if problem != nil, keep { kept?.finish(); kept = nil }
            outcome.update { if let problem { $0.failed.append(problem) } else { $0.served += 1 } }
            let pause = every - (MonotonicClock.now() - started)
            if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        }
        kept?.finish()
    }
}
