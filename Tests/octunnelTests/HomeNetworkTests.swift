import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The home machine's failures the VPS cannot see at once: its link cut for a minute, and a
/// home that comes back while the VPS still holds its dead session's forward.
@Suite("home up: links that break", .timeLimit(.minutes(4)))
struct HomeNetworkTests {
    static let keepalive = 5.0
    static let outage = 60.0
    /// As in NetworkCutTests: 3 × keepalive + 1 s, a 0.5 s poll and 2 s for a loaded machine.
    static let deathBound = 3 * keepalive + 1 + 0.5 + 2
    /// An attempt in flight ends within the connect timeout (10 s), the next starts within the
    /// backoff's cap (30 s), then a connect and a listen over a healthy veth.
    static let recoveryBound = 10 + ReconnectPolicy().maximum + 5

    @Test("the home link down for 60 s: home up declares the session dead within about three keepalives and serves again within the backoff once the link is back")
    func homeLinkDownAndBack() async throws {
        let net: NetworkNamespacePair
        do {
            net = try NetworkNamespacePair()
        } catch let unavailable as NetworkNamespacesUnavailable {
            try Test.cancel("network namespaces unavailable here: \(unavailable.reason)")
        }
        defer { net.remove() }
        // Home is the client namespace (OpenCode and home up), the VPS the server namespace.
        let backend = try OpenCodeStandIn(launcher: net.exec(.client))
        defer { backend.stop() }
        // The VPS drops a dead session within 10-15 s (as the fix says), so the port is free when home returns.
        let fixture = try TunnelFixture(sshdConfig: "ClientAliveInterval 5\nClientAliveCountMax 2\n",
                                        sshdAddress: net.serverAddress, sshdLauncher: net.exec(.server))
        defer { fixture.sshd.stop(hard: true) }
        let remotePort = freePort()
        let homeSide = try fixture.homeUp(remotePort: remotePort, homePort: backend.port,
                                          extra: ["--json", "--no-health", "--keepalive", String(Int(Self.keepalive))], launcher: net.exec(.client))
        defer { homeSide.stopGracefullyOrKill() }
        let scratch = try TempDirectory("octunnel-homecut")
        let listening = try #require(await homeSide.event("listening", after: 0, timeout: 30), "\(homeSide.stdout) \(homeSide.stderrText)")
        try expectBytesThrough(net, side: .server, port: remotePort, scratch: scratch, label: "before the cut")

        try net.setLink(.server, up: false)
        let cutAt = Date()
        let death = try #require(await homeSide.event("disconnected", after: listening.index, timeout: Self.deathBound + 15),
                                 "no disconnected event after the cut: \(homeSide.stdout.suffix(5))")
        let deathAfter = homeSide.stdoutArrival(death.index).timeIntervalSince(cutAt)
        #expect((death.object["reason"] as? String ?? "").contains("(keepalive)"), "\(death.object)")
        #expect(deathAfter <= Self.deathBound, "declared dead \(deathAfter) s after the cut (bound \(Self.deathBound))")
        let rest = Self.outage - Date().timeIntervalSince(cutAt)
        if rest > 0 { try await Task.sleep(nanoseconds: UInt64(rest * 1e9)) }
        #expect(await homeSide.event("listening", after: death.index, timeout: 0) == nil, "listening while the link was down")

        try net.setLink(.server, up: true)
        let upAt = Date()
        let back = try #require(await homeSide.event("listening", after: death.index, timeout: Self.recoveryBound + 10),
                                "not listening again \(Int(Date().timeIntervalSince(upAt))) s after the link came back: \(homeSide.stdout.suffix(8))")
        let recoveredAfter = homeSide.stdoutArrival(back.index).timeIntervalSince(upAt)
        #expect(recoveredAfter <= Self.recoveryBound, "serving again \(recoveredAfter) s after the link came back (bound \(Self.recoveryBound))")
        try expectBytesThrough(net, side: .server, port: remotePort, scratch: scratch, label: "after the link came back")
        FileHandle.standardError.write(Data(String(format: "HomeNetworkTests: dead %.1f s after the cut (bound %.1f); serving again %.1f s after the link came back (bound %.1f)\n",
                                                   deathAfter, Self.deathBound, recoveredAfter, Self.recoveryBound).utf8))
        homeSide.signal(SIGINT)
        #expect(homeSide.waitForExit(timeout: 5) == 0)
    }

    /// A home that "reboots": its old session goes silent without closing (SIGSTOP: the socket
    /// stays open, nothing answers; as a power cut leaves it on the VPS), and a new `home up` starts.
    @Test("home back while the VPS holds the dead session's forward: with ClientAliveInterval it gets through within the bound; without, home up and the laptop's check name the fix",
          arguments: [true, false])
    func reboot(clientAlive: Bool) async throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture(sshdConfig: clientAlive ? "ClientAliveInterval 1\nClientAliveCountMax 3\n" : "")
        let remotePort = freePort()
        let before = try fixture.homeUp(remotePort: remotePort, homePort: echo.port, extra: ["--no-health"])
        defer { before.signal(SIGCONT); before.signal(SIGKILL) }
        try #require(try await offPool { before.homeListening() } != nil, "\(before.stderrText)")
        before.signal(SIGSTOP)
        let rebootAt = Date()
        let after = try fixture.homeUp(remotePort: remotePort, homePort: echo.port, extra: ["--no-health"])
        defer { after.stopGracefullyOrKill() }
        let refused = try await offPool { after.waitForLine(containing: "refused to listen", timeout: 20) }
        #expect(refused?.contains("ClientAliveInterval 15") == true, "\(after.stderrText)")
        if clientAlive {
            // sshd drops the silent session after (3 + 1) × 1 s of unanswered probes, measured here up
            // to twice that under load; the next listen (backoff 1 s doubling to 5 s) succeeds; 8 s
            // more for a loaded machine.
            let bound = 2 * 4.0 + 5 + 8
            let listening = try await offPool { after.homeListening(timeout: bound + 10) }
            #expect(listening != nil, "\(after.stderrText)")
            let took = Date().timeIntervalSince(rebootAt)
            FileHandle.standardError.write(Data(String(format: "HomeNetworkTests: after the reboot, listening again in %.1f s (bound %.0f s)\n", took, bound).utf8))
            #expect(took <= bound, "listening \(took) s after the reboot (bound \(bound)): \(after.stderrText)\n\(fixture.sshd.log.suffix(1500))")
            #expect(try await offPool { roundTrip(port: remotePort, seed: 9) })
        } else {
            // Without it the VPS never lets go: home up keeps retrying and keeps naming the fix.
            let second = try await offPool { after.waitForLine(containing: "refused to listen", after: after.stderr.count, timeout: 10) }
            #expect(second != nil, "\(after.stderrText)")
            #expect(after.isRunning)
            #expect(after.homeListening(timeout: 0) == nil)
            // The laptop meets the stale forward: the VPS port accepts, nothing ever answers.
            let check = try await offPool {
                try fixture.run(["tunnel", "check", fixture.target, "--remote-port", String(remotePort), "--connect-timeout", "10",
                                 "--health-timeout", "3"])
            }
            #expect(check.status == 69)
            #expect(check.stderr.contains("accepts connections but nothing answered within 3 s"), "\(check.stderr)")
            #expect(check.stderr.contains("ClientAliveInterval 15"))
        }
    }
}
