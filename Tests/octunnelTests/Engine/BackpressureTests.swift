import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The send path accepts every byte libssh2 sends and stops reading clients while too much
/// waits for the SSH socket: memory stays bounded whichever side stops reading.
@Suite("bounded memory under backpressure", .ownThreads, .timeLimit(.minutes(3)))
struct BackpressureTests {
    @Test(
        "a VPS that stops reading (sshd's session SIGSTOPped) while 24 clients push: memory stays bounded, no spinning, and it recovers"
    )
    func stalledVPS() throws {
        let echo = try TCPTestServer.echo()
        // sshd probes the client once a second (ClientAliveInterval), so after the stall its
        // probes and libssh2's replies (sent from a stack buffer) cross a full send buffer.
        let fixture = try TunnelFixture(sshdConfig: "ClientAliveInterval 1")
        defer { fixture.sshd.thawSessions() }
        // A long keepalive: the stall must not end the session by itself.
        let tunnel = try fixture.up(remotePort: echo.port, extra: ["--keepalive", "60", "--no-health"])
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        var clients: [Int32] = []
        defer { clients.forEach { close($0) } }
        for index in 0..<24 {
            #expect(roundTrip(port: port, seed: UInt64(20 + index)))
            let fd = connectLoopback(port)
            try #require(fd >= 0)
            clients.append(fd)
        }
        // Every client gets its channel before the freeze.
        for fd in clients {
            setSocketTimeout(fd, seconds: 10)
            #expect(writeAll(fd, [1, 2, 3]))
            var echoed = [UInt8](repeating: 0, count: 3)
            #expect(read(fd, &echoed, 3) == 3)
            Sockets_setNonBlocking(fd)
        }
        let rssBefore = residentKiB(tunnel.pid)
        fixture.sshd.freezeSessions()

        // Push until every client is held back (its socket stops taking bytes for 2 s), at most 64 MiB each.
        let chunk = [UInt8](repeating: 0x62, count: 65536)
        var pushed = [Int](repeating: 0, count: clients.count)
        var lastProgress = Date()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && Date().timeIntervalSince(lastProgress) < 2 {
            var moved = false
            for (index, fd) in clients.enumerated() where pushed[index] < 64 << 20 {
                let n = chunk.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 { pushed[index] += n; moved = true }
            }
            if moved { lastProgress = Date() } else { usleep(20_000) }
        }
        #expect(
            pushed.allSatisfy { $0 < 64 << 20 },
            "a client pushed 64 MiB into a stalled VPS: no backpressure (\(pushed))")
        let grown = residentKiB(tunnel.pid) - rssBefore
        #expect(
            grown < 12 * 1024,
            "octunnel grew by \(grown) KiB while the VPS was not reading (\(pushed.reduce(0, +)) bytes pushed)")

        // Held back, the tunnel sleeps: it waits for the socket to become writable, no busy loop.
        let cpuBefore = tunnel.cpuSeconds
        #expect(tunnel.waitForExit(timeout: 3) == nil)
        let used = tunnel.cpuSeconds - cpuBefore
        #expect(used < 0.3, "octunnel used \(used) s of CPU in 3 s waiting for a stalled VPS")

        clients.forEach { close($0) }
        clients = []
        fixture.sshd.thawSessions()
        #expect(
            roundTrip(port: port, seed: 40),
            "the tunnel did not carry a new connection after the VPS woke: \(tunnel.stderrText)")
        #expect(
            !waitUntil(timeout: 3) { tunnel.stderr.contains { $0.hasPrefix("disconnected") } },
            "the session did not survive the stall: \(tunnel.stderrText)")
        #expect(roundTrip(port: port, seed: 41))
        #expect(tunnel.stderr.filter { $0.hasPrefix("connected to") }.count == 1, "\(tunnel.stderrText)")
        #expect(tunnel.isRunning)
    }
}
