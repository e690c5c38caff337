import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 56's second session for bursts against a real sshd: 20 clients at once, each channel
/// open a 40 ms round trip away (scripts/lib/delay-relay.py in front of sshd), make the tunnel
/// sign in a second time; once the burst is over that session says goodbye and goes.
@Suite("a burst's second session against a real sshd behind a 40 ms relay", .ownThreads, .timeLimit(.minutes(3)))
struct BurstSessionTests {
    /// sshd's log lines containing `text`.
    static func logLines(_ fixture: TunnelFixture, _ text: String) -> [String] {
        let log = (try? String(contentsOfFile: fixture.sshd.logPath, encoding: .utf8)) ?? ""
        return log.components(separatedBy: .newlines).filter { $0.contains(text) }
    }

    @Test(
        "20 clients at once: a second session signs in, every client is echoed, status says 2; it closes with a goodbye once idle"
    )
    func burstOpensAndCloses() throws {
        let echo = try TCPTestServer.echo()
        defer { echo.stop() }
        let fixture = try TunnelFixture()
        let relay = try DelayRelay(to: fixture.sshd, milliseconds: 20)
        defer { relay.stop() }
        // No pool: every client waits for an open of its own, as in a burst larger than the pool.
        let tunnel = try fixture.up(
            remotePort: echo.port, extra: ["--no-health", "--warm", "0"], via: relay.target)
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        #expect(fixture.logins == 1)

        let started = Date()
        let clients = try (0..<20).map { _ in try #require(ClientConnection(port: port, timeout: 20)) }
        defer { clients.forEach { $0.finish() } }
        let payloads = (0..<20).map { patternBytes(1000, seed: UInt64($0)) }
        for (client, payload) in zip(clients, payloads) { #expect(writeAll(client.fd, payload)) }
        for (client, payload) in zip(clients, payloads) { #expect(readAll(client.fd, limit: payload.count) == payload) }
        let burst = Date().timeIntervalSince(started)

        let during = try fixture.status()
        #expect(during["sessions"] as? Int == 2 && during["burstSessions"] as? Int == 1, "\(during)")
        #expect(fixture.logins == 2, "\(tunnel.stderrText)")
        let text = try fixture.run(["tunnel", "status"])
        #expect(
            text.stdout.contains("(2 sessions)")
                && text.stdout.contains("sessions    2 · 1 extra session for bursts since start"), "\(text)")
        clients.forEach { $0.finish() }

        // Closed once nothing waited and nothing ran on it for 10 s.
        let idleFrom = Date()
        var closedAfter: Double?
        while Date().timeIntervalSince(idleFrom) < 30 {
            if try fixture.status()["sessions"] as? Int == 1 {
                closedAfter = Date().timeIntervalSince(idleFrom); break
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
        let after = try #require(closedAfter, "still two sessions 30 s after the burst: \(tunnel.stderrText)")
        #expect(after >= 8 && after <= 20, "closed \(after) s after the burst")
        #expect(Self.logLines(fixture, "burst over").count == 1, "sshd heard no goodbye")
        #expect(try fixture.status()["burstSessions"] as? Int == 1)
        // The driver's session still serves.
        #expect(sendAndReceive(port: port, payload: payloads[0], timeout: 20) == payloads[0])
        #expect(!tunnel.stderrText.contains("warning"), "\(tunnel.stderrText)")
        FileHandle.standardError.write(
            Data(
                ("BurstSessionTests: 20 clients echoed in " + String(format: "%.2f", burst)
                    + " s over a 40 ms relay; the second session closed " + String(format: "%.1f", after) + " s after\n")
                    .utf8))
    }
}
