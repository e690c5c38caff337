import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("tunnel up against a real sshd", .ownThreads, .timeLimit(.minutes(3)))
struct TunnelUpTests {
    /// `tunnel up` through `fixture` to `remotePort`, and a client connected to its local port, its reads and writes
    /// timing out after `seconds`: the tunnel and the client's socket (the caller closes it).
    static func client(
        through fixture: TunnelFixture, to remotePort: Int, seconds: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (tunnel: RunningProcess, fd: Int32) {
        let tunnel = try fixture.up(remotePort: remotePort)
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)", sourceLocation: sourceLocation)
        let fd = connectLoopback(port)
        try #require(fd >= 0, sourceLocation: sourceLocation)
        setSocketTimeout(fd, seconds: seconds)
        return (tunnel, fd)
    }

    /// A fixture and `tunnel up` to its echo server with 2 s keepalives, that carried one round trip (`seed`).
    static func keptAliveEcho(
        seed: UInt64, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (fixture: TunnelFixture, tunnel: RunningProcess, port: Int) {
        let fixture = try TunnelFixture()
        let (tunnel, port) = try fixture.upToEcho(extra: ["--keepalive", "2"], sourceLocation: sourceLocation)
        #expect(roundTrip(port: port, seed: seed), sourceLocation: sourceLocation)
        return (fixture, tunnel, port)
    }

    /// `tunnel` exits within 20 s with `status`, and its stderr says `words`.
    static func expectExit(
        _ tunnel: RunningProcess, _ status: Int32, saying words: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(tunnel.waitForExit(timeout: 20) == status, sourceLocation: sourceLocation)
        #expect(tunnel.stderrText.contains(words), sourceLocation: sourceLocation)
    }

    @Test("a GET goes through a key restricted to that one forward, and the host key is recorded")
    func getThroughRestrictedKey() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture(restricted: backend.port)
        let tunnel = try fixture.up(remotePort: backend.port)
        let port = try #require(tunnel.forwardedPort(), "no forwarding line: \(tunnel.stderrText)")
        let response = try #require(httpGet(port: port, path: "/global/health"))
        #expect(response.hasPrefix("HTTP/1.0 200") || response.hasPrefix("HTTP/1.1 200"))
        #expect(response.contains("\"healthy\":true"))
        let knownHosts = try String(contentsOfFile: fixture.knownHosts, encoding: .utf8)
        #expect(knownHosts.hasPrefix("[127.0.0.1]:\(fixture.sshd.port) ssh-ed25519 AAAA"))
        #expect(tunnel.stderrText.contains("trusted on first use"))
        let found = try run(
            "/usr/bin/ssh-keygen", ["-F", "[127.0.0.1]:\(fixture.sshd.port)", "-f", fixture.knownHosts])
        #expect(found.status == 0)
        // The restricted key can forward, but it cannot run a command on the VPS.
        let shell = try run(
            "/usr/bin/ssh",
            [
                "-i", fixture.home.file("id_ed25519"), "-o", "UserKnownHostsFile=\(fixture.knownHosts)",
                "-o", "BatchMode=yes", "-p", String(fixture.sshd.port), "root@127.0.0.1", "echo", "RAN-A-COMMAND",
            ])
        #expect(!shell.stdout.contains("RAN-A-COMMAND"))
        // Nor can it take a VPS port (a stolen laptop key posing as the home side): home up is refused, 77.
        let listen = try RunningProcess(
            octunnelBinary,
            [
                "home", "up", "--home", fixture.home.path, fixture.target, "--remote-port", String(freePort()),
                "--no-health", "--connect-timeout", "10",
            ])
        defer { listen.stopGracefullyOrKill() }
        #expect(listen.waitForExit(timeout: 30) == 77, "\(listen.stderrText)")
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0)
    }

    @Test("50 concurrent connections each move 1 MiB both ways, every byte checked")
    func concurrentEcho() throws {
        let fixture = try TunnelFixture()
        let (tunnel, port) = try fixture.upToEcho()
        let results = ResultBox(count: 50)
        DispatchQueue.concurrentPerform(iterations: 50) { index in
            let payload = patternBytes(1 << 20, seed: UInt64(index + 1))
            let received = sendAndReceive(port: port, payload: payload, timeout: 60)
            results.set(index, received == payload)
        }
        #expect(results.all, "some connections lost or reordered bytes")
        #expect(tunnel.isRunning)
    }

    @Test("a 64 MiB download arrives intact")
    func bigDownload() throws {
        let size = 64 << 20
        let payload = patternBytes(size, seed: 64)
        let server = try TCPTestServer { fd in
            writeAll(fd, payload)
            shutdown(fd, Int32(SHUT_WR))
            _ = readAll(fd)
        }
        let fixture = try TunnelFixture()
        let (tunnel, fd) = try Self.client(through: fixture, to: server.port, seconds: 60)
        defer { close(fd); withExtendedLifetime(tunnel) {} }
        let received = readAll(fd)
        #expect(received.count == size)
        #expect(received == payload)
    }

    @Test("half-close is carried both ways")
    func halfClose() throws {
        // The server reads to EOF, then answers with the count and its own EOF.
        let counter = try TCPTestServer { fd in
            let got = readAll(fd)
            writeAll(fd, Array("got \(got.count)".utf8))
            shutdown(fd, Int32(SHUT_WR))
        }
        // The server speaks first and closes its side, then still reads what the client sends.
        let speaker = try TCPTestServer { fd in
            writeAll(fd, Array("hello".utf8))
            shutdown(fd, Int32(SHUT_WR))
            let got = readAll(fd)
            writeAll(fd, got) // must fail quietly: our write side is shut
            _ = got
        }
        let fixture = try TunnelFixture()
        let (first, fd) = try Self.client(through: fixture, to: counter.port, seconds: 10)
        writeAll(fd, patternBytes(300_000, seed: 3))
        shutdown(fd, Int32(SHUT_WR))
        #expect(String(decoding: readAll(fd), as: UTF8.self) == "got 300000")
        close(fd)

        let (second, fd2) = try Self.client(through: fixture, to: speaker.port, seconds: 10)
        defer { close(fd2); withExtendedLifetime((first, second)) {} }
        #expect(String(decoding: readAll(fd2), as: UTF8.self) == "hello")
        // After the server's EOF the client can still send.
        #expect(writeAll(fd2, Array("still open".utf8)))
    }

    @Test("a new sshd host key stops with exit 76 before any authentication; trust reset lets it connect")
    func changedHostKey() throws {
        let fixture = try TunnelFixture()
        let echo = try TCPTestServer.echo()
        let first = try fixture.up(remotePort: echo.port)
        _ = try #require(first.forwardedPort(), "\(first.stderrText)")
        first.signal(SIGTERM)
        #expect(first.waitForExit(timeout: 5) == 0)

        try fixture.sshd.regenerateHostKey()
        try fixture.sshd.restart()
        let logBefore = fixture.sshd.log.count
        let second = try fixture.up(remotePort: echo.port)
        #expect(second.waitForExit(timeout: 20) == 76)
        #expect(second.stderrText.contains("HOST KEY CHANGED"))
        #expect(second.stderrText.contains("octunnel trust reset 127.0.0.1:\(fixture.sshd.port)"))
        #expect(second.stderrText.contains(fixture.sshd.hostKeyFingerprint))
        let newLog = String(fixture.sshd.log.dropFirst(logBefore))
        #expect(!newLog.contains("publickey"), "sshd saw an authentication attempt: \(newLog)")
        #expect(!newLog.contains("Accepted"))

        let reset = try fixture.run(["trust", "reset", "127.0.0.1:\(fixture.sshd.port)"])
        #expect(reset.status == 0)
        #expect(reset.stderr.contains("Removed 1 entry"))
        let third = try fixture.up(remotePort: echo.port)
        _ = try #require(third.forwardedPort(), "\(third.stderrText)")
        #expect(third.stderrText.contains("trusted on first use"))
    }

    @Test("--expect-fingerprint that does not match stops with exit 76")
    func unexpectedFingerprint() throws {
        let fixture = try TunnelFixture()
        let wrong = "SHA256:" + String(repeating: "A", count: 43)
        let tunnel = try fixture.up(remotePort: 9, extra: ["--expect-fingerprint", wrong])
        Self.expectExit(tunnel, 76, saying: fixture.sshd.hostKeyFingerprint)
        #expect(!FileManager.default.fileExists(atPath: fixture.knownHosts))
    }

    @Test("a key the VPS does not authorize exits 77 with the line to add")
    func keyNotAuthorized() throws {
        let fixture = try TunnelFixture(authorize: false)
        let tunnel = try fixture.up(remotePort: 9)
        Self.expectExit(tunnel, 77, saying: fixture.key.fingerprint)
        #expect(tunnel.stderrText.contains(fixture.key.line))
        #expect(tunnel.stderrText.contains("restrict,port-forwarding,permitopen=\"127.0.0.1:9\""))
        #expect(tunnel.stderrText.contains("`octunnel authorize \(fixture.target)`"))
        // What a hand edit gets wrong, named: StrictModes' modes, a broken or cut line.
        #expect(tunnel.stderrText.contains("`chmod go-w ~ ~/.ssh ~/.ssh/authorized_keys` on the VPS"))
        #expect(tunnel.stderrText.contains("broke it across lines or cut it short"))
        #expect(tunnel.stderrText.contains("`octunnel keys list \(fixture.target)`"))
    }

    @Test("a VPS that only takes passwords exits 77 and says so")
    func passwordOnly() throws {
        let fixture = try TunnelFixture(sshdConfig: "PubkeyAuthentication no\nPasswordAuthentication yes")
        let tunnel = try fixture.up(remotePort: 9)
        Self.expectExit(tunnel, 77, saying: "does not accept keys")
    }

    @Test("nothing listening behind the VPS: the client is closed at once and the tunnel stays up")
    func nothingBehindVPS() throws {
        let fixture = try TunnelFixture()
        let closedPort = freePort()
        let tunnel = try fixture.up(remotePort: closedPort)
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        for _ in 0..<3 {
            let fd = connectLoopback(port)
            try #require(fd >= 0)
            setSocketTimeout(fd, seconds: 30)
            let started = Date()
            let bytes = readAll(fd)
            close(fd)
            #expect(bytes.isEmpty)
            // Closed at once (well under 0.1 s); the guard only tells a close from a 30 s hang.
            #expect(Date().timeIntervalSince(started) < 15)
        }
        #expect(tunnel.waitForLine(containing: "nothing listens on VPS 127.0.0.1:\(closedPort)") != nil)
        #expect(tunnel.stderrText.contains("-R 127.0.0.1:\(closedPort):127.0.0.1:4096"))
        #expect(tunnel.isRunning)
        // The same tunnel forwards once something listens there.
        let echo = try TCPTestServer.echo()
        _ = echo
        #expect(tunnel.isRunning)
    }

    @Test("sshd killed and started again: the tunnel reconnects and forwards without a restart")
    func reconnects() throws {
        let (fixture, tunnel, port) = try Self.keptAliveEcho(seed: 1)
        fixture.sshd.stop(hard: true)
        #expect(tunnel.waitForLine(containing: "disconnected:", timeout: 15) != nil, "\(tunnel.stderrText)")
        try fixture.sshd.start()
        let connectedLines = { tunnel.stderr.filter { $0.hasPrefix("connected to") }.count }
        #expect(waitUntil(timeout: 40) { connectedLines() >= 2 }, "\(tunnel.stderrText)")
        #expect(roundTrip(port: port, seed: 2))
        #expect(tunnel.isRunning)
    }

    @Test("SIGINT exits 0 (its goodbye budget is 1.2 s), and an idle tunnel uses almost no CPU")
    func sigintAndIdleCPU() throws {
        let (fixture, tunnel, _) = try Self.keptAliveEcho(seed: 7)
        defer { withExtendedLifetime(fixture) {} }
        let before = tunnel.cpuSeconds
        let idleStart = Date()
        // Idle for 10 s: wait on the process itself, which must not exit.
        #expect(tunnel.waitForExit(timeout: 10) == nil)
        let used = tunnel.cpuSeconds - before
        #expect(Date().timeIntervalSince(idleStart) >= 9.9)
        #expect(used < 0.05, "idle tunnel used \(used) s of CPU in 10 s")
        let stopAt = Date()
        tunnel.signal(SIGINT)
        let status = tunnel.waitForExit(timeout: 15)
        #expect(status == 0)
        // The goodbye's budget is 1.2 s; 10 s only guards against a hang on a loaded machine.
        let took = Date().timeIntervalSince(stopAt)
        print("tunnel up stopped \(String(format: "%.2f", took)) s after SIGINT")
        #expect(took < 10)
    }

    @Test("an HTTP server on the SSH port is said to be not SSH, exit 69")
    func notSSH() throws {
        let fixture = try TunnelFixture()
        let web = try OpenCodeStandIn()
        let tunnel = try RunningProcess(
            octunnelBinary,
            [
                "tunnel", "up", "--home", fixture.home.path, "root@127.0.0.1:\(web.port)",
                "--local-port", "0", "--connect-timeout", "5",
            ])
        Self.expectExit(tunnel, 69, saying: "is not an SSH server")
    }

    @Test("a closed SSH port is refused, exit 69")
    func refused() throws {
        let fixture = try TunnelFixture()
        let port = freePort()
        let result = try run(
            octunnelBinary,
            ["tunnel", "up", "--home", fixture.home.path, "root@127.0.0.1:\(port)", "--local-port", "0"])
        #expect(result.status == 69)
        #expect(result.stderr.contains("127.0.0.1:\(port) refused the connection"))
    }

    @Test("a busy local port exits 69 naming it")
    func localPortInUse() throws {
        let fixture = try TunnelFixture()
        let busy = try TCPTestServer.echo()
        let result = try run(
            octunnelBinary,
            ["tunnel", "up", "--home", fixture.home.path, fixture.target, "--local-port", String(busy.port)])
        #expect(result.status == 69)
        #expect(result.stderr.contains("127.0.0.1:\(busy.port) is already in use"))
    }
}

/// Sends 256 KiB through an echo forward and checks it comes back.
func roundTrip(port: Int, seed: UInt64) -> Bool {
    let payload = patternBytes(256 * 1024, seed: seed)
    return sendAndReceive(port: port, payload: payload, timeout: 20) == payload
}

/// Thread-safe per-index results.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Bool]
    init(count: Int) { values = Array(repeating: false, count: count) }
    func set(_ index: Int, _ value: Bool) { lock.lock(); values[index] = value; lock.unlock() }
    var all: Bool { lock.lock(); defer { lock.unlock() }; return values.allSatisfy { $0 } }
    func value(_ index: Int) -> Bool { lock.lock(); defer { lock.unlock() }; return values[index] }
}

@Suite("readiness", .ownThreads, .timeLimit(.minutes(3)))
struct ReadinessTests {
    @Test("a client that connects before the session is up is served as soon as it is, not at the next keepalive")
    func earlyClientIsServedPromptly() throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture()
        let port = freePort()
        let tunnel = try fixture.up(remotePort: echo.port, extra: ["--local-port", String(port), "--keepalive", "30"])
        _ = tunnel
        // Connect as early as the listener exists, racing the SSH handshake.
        var fd: Int32 = -1
        #expect(
            waitUntil(timeout: 10) {
                fd = connectLoopback(port); return fd >= 0
            })
        defer { close(fd) }
        setSocketTimeout(fd, seconds: 10)
        let started = Date()
        #expect(writeAll(fd, Array("ping".utf8)))
        shutdown(fd, Int32(SHUT_WR))
        #expect(readAll(fd) == Array("ping".utf8))
        // keepalive 30 s: an early client left for the keepalive would wait that long; served at once here.
        #expect(Date().timeIntervalSince(started) < 15, "the early client waited for the keepalive")
    }
}

@Suite("channel open order", .ownThreads, .timeLimit(.minutes(3)))
struct OpenOrderTests {
    @Test("a client that has sent its request is opened before older clients that have sent nothing (preconnects)")
    func dataBeforeQuietClients() throws {
        // The backend notes when each forwarded connection arrives and whether it carried data.
        let arrivals = ArrivalLog()
        let backend = try TCPTestServer { fd in
            let entry = arrivals.arrived()
            setSocketTimeout(fd, seconds: 30)
            var byte: UInt8 = 0
            if read(fd, &byte, 1) > 0 {
                arrivals.carriedData(entry)
                _ = writeAll(fd, Array("ok".utf8))
            }
        }
        let fixture = try TunnelFixture()
        // 50 ms each way in front of sshd, so each channel open takes a visible round trip.
        let relayPort = freePort()
        let relay = try RunningProcess(
            python3,
            [
                packageRoot + "/scripts/lib/delay-relay.py", "127.0.0.1",
                String(relayPort), "127.0.0.1", String(fixture.sshd.port), "50",
            ])
        defer { relay.signal(SIGTERM); _ = relay.waitForExit(timeout: 5) }
        try #require(relay.waitForLine(containing: "LISTENING", stdout: true) != nil, "\(relay.stderrText)")
        let tunnel = try fixture.up(
            remotePort: backend.port, extra: ["--no-health"], via: "root@127.0.0.1:\(relayPort)")
        defer { tunnel.signal(SIGTERM); _ = tunnel.waitForExit(timeout: 5) }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")

        let quiet = (0..<4).map { _ in connectLoopback(port) }
        defer { quiet.forEach { close($0) } }
        let client = connectLoopback(port)
        try #require(client >= 0 && quiet.allSatisfy { $0 >= 0 })
        defer { close(client) }
        setSocketTimeout(client, seconds: 20)
        #expect(writeAll(client, Array("D".utf8)))
        var answer = [UInt8](repeating: 0, count: 2)
        #expect(read(client, &answer, 2) == 2, "the client with data got no answer")
        // FIFO would put it fifth; only the open already in flight may go first.
        let order = arrivals.snapshot()
        let position = try #require(order.firstIndex { $0.carriedData }, "\(order)")
        #expect(position <= 1, "the client with data was opened at position \(position) of \(order.count)")
    }
}

/// When each backend connection arrived and whether it carried data, in arrival order.
final class ArrivalLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(at: Date, carriedData: Bool)] = []

    /// Notes an arrival now; returns its handle for `carriedData`.
    func arrived() -> Int {
        lock.lock(); defer { lock.unlock() }
        entries.append((Date(), false))
        return entries.count - 1
    }

    func carriedData(_ entry: Int) {
        lock.lock(); defer { lock.unlock() }
        entries[entry].carriedData = true
    }

    func snapshot() -> [(at: Date, carriedData: Bool)] {
        lock.lock(); defer { lock.unlock() }
        return entries.sorted { $0.at < $1.at }
    }
}
