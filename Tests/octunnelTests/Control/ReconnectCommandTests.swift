import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `tunnel reconnect` / `home reconnect` and SIGUSR1 against the built binary, a real sshd and
/// the OpenCode stand-in on loopback.
@Suite("tunnel reconnect and home reconnect", .ownThreads, .timeLimit(.minutes(3)))
struct ReconnectCommandTests {
    @Test("nothing running: tunnel reconnect and home reconnect exit 3, like status")
    func nothingRunning() throws {
        let home = try TempDirectory("octunnel-reconnect-none")
        for role in ["tunnel", "home"] {
            let result = try run(octunnelBinary, [role, "reconnect", "--home", home.path])
            #expect(result.status == 3, "\(role): \(result)")
            #expect(
                result.stderr.contains(role == "tunnel" ? "no tunnel running" : "no home side running"),
                "\(result.stderr)")
        }
    }

    @Test(
        "tunnel reconnect: a new session comes up before the old one goes (the local port stays), status counts it; SIGUSR1 does the same"
    )
    func tunnelReconnect() throws {
        try TunnelFixture.withTunnelToStandIn { fixture, tunnel, port in
            #expect(httpGet(port: port, path: "/global/health")?.hasPrefix("HTTP/1.1 200") == true)

            let result = try fixture.run(["tunnel", "reconnect", "--json"])
            #expect(result.status == 0, "\(result) \(tunnel.stderrText)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
            #expect(object["event"] as? String == "reconnected")
            #expect(object["reconnects"] as? Int == 1)
            #expect(object["pid"] as? Int == Int(tunnel.pid))
            #expect(
                tunnel.waitForLine(containing: "reconnect requested: reconnecting now", timeout: 5) != nil,
                "\(tunnel.stderrText)")
            #expect(
                tunnel.waitForLine(containing: "reconnected ", timeout: 5)?.contains("after a reconnect request")
                    == true,
                "\(tunnel.stderrText)")
            // Make-before-break: the old session never left a gap ("disconnected" is not said).
            #expect(!tunnel.stderrText.contains("disconnected:"), "\(tunnel.stderrText)")
            #expect(httpGet(port: port, path: "/global/health")?.hasPrefix("HTTP/1.1 200") == true)

            tunnel.signal(SIGUSR1)
            var status: [String: Any] = [:]
            #expect(
                waitUntil(timeout: 15) {
                    guard let run = try? fixture.run(["tunnel", "status", "--json"]),
                        let parsed = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
                    else { return false }
                    status = parsed
                    return parsed["reconnects"] as? Int == 2 && parsed["state"] as? String == "connected"
                }, "\(status) \(tunnel.stderrText)")
            #expect((status["lastNetworkEvent"] as? String ?? "").contains("after a reconnect request"), "\(status)")
            #expect(httpGet(port: port, path: "/global/health")?.hasPrefix("HTTP/1.1 200") == true)
            let human = try fixture.run(["tunnel", "status"])
            #expect(human.stdout.contains("  network     reconnected "), "\(human.stdout)")
        }
    }

    @Test(
        "home reconnect: the old session says goodbye first (the VPS frees its port), the new one listens again at once"
    )
    func homeReconnect() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let homeSide = try fixture.homeUp(remotePort: remotePort, homePort: backend.port, extra: ["--no-health"])
        defer { homeSide.stopGracefullyOrKill() }
        try #require(homeSide.homeListening() != nil, "\(homeSide.stderrText)")
        let startedAt = Date()
        let result = try fixture.run(["home", "reconnect"])
        #expect(result.status == 0, "\(result) \(homeSide.stderrText)")
        #expect(result.stderr.contains("reconnected in "), "\(result.stderr)")
        let again = homeSide.waitForLine(
            containing: " → home ", after: homeSide.stderr.firstIndex { $0.contains("reconnecting now") } ?? 0,
            timeout: 10)
        #expect(again != nil, "not listening again: \(homeSide.stderrText)")
        #expect(
            !homeSide.stderrText.contains("refused to listen"),
            "the old session still held the port: \(homeSide.stderrText)")
        // A hang guard (issue 25): listening again took about 1 s; the old session's port would
        // otherwise be held until sshd's ClientAlive (45 s) frees it.
        let took = Date().timeIntervalSince(startedAt)
        print("home reconnect: listening again \(String(format: "%.2f", took)) s after the request")
        #expect(took < 20)
        #expect(httpGet(port: remotePort, path: "/global/health")?.hasPrefix("HTTP/1.1 200") == true)
    }
}
