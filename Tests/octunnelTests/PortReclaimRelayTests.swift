import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The port reclaim with Debian's sslh in front of the VPS's sshd (SSH on a shared port): sshd's
/// peer is sslh on loopback, which acknowledges everything, so TCP cannot tell a dead home from
/// a live one and only the mark's heartbeat (`octunnel-beat`) can. Machines as in
/// PortReclaimTests; sshd with its defaults, behind `sslh -p VPS:port --ssh 127.0.0.1:sshd`.
@Suite("home up behind a relay (sslh, a plain TCP relay): a dead session's VPS port taken back by its heartbeat", .ownThreads, .timeLimit(.minutes(6)))
struct PortReclaimRelayTests {
    /// A hang guard, not the goal (10 s, docs/benchmarks.md): several times the slowest seen
    /// here under load (9.1 s behind sslh, of which 6 s are the heartbeat's window).
    static let servedBound = 45.0

    @Test("behind sslh or a plain TCP relay, a home reboots (link down without a FIN, back from a new address): the new home up ends the dead session for its missing heartbeat and the phone is served",
          arguments: [World.Relay.sslh, .tcp])
    func reboot(relay: World.Relay) async throws {
        let world = try await World.make("relayReboot", relay: relay)
        defer { world.remove() }
        let first = try world.homeUp(launcher: world.net.exec(.client))
        defer { first.signal(SIGKILL); _ = first.waitForExit(timeout: 5) }
        try #require(try await offPool { first.homeListening() } != nil, "\(first.stderrText)")
        let phone = try await world.startPhone()
        defer { phone.signal(SIGKILL); _ = phone.waitForExit(timeout: 5) }

        let rebooted = try await world.powerCutAndReboot(first)
        defer { rebooted.remove() }
        let (home, cutAt) = (rebooted.home, rebooted.cutAt)
        let startedAt = Date()
        let second = try world.homeUp(launcher: home.exec)
        defer { second.stopGracefullyOrKill() }
        let takenBack = try await offPool { second.waitForLine(containing: "taken back", timeout: Self.servedBound) }
        // sshd's peer is the relay, on the VPS's loopback.
        #expect(takenBack?.contains("ended the dead home session from 127.0.0.1:") == true,
                "\(second.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
        #expect(takenBack?.contains("no heartbeat for \(PortReclaimProgram.heartbeatSilence) s") == true, "\(takenBack ?? "")")
        let served = try await offPool { phone.firstServed(after: startedAt, timeout: Self.servedBound) }
        let took = served.map { $0.timeIntervalSince(startedAt) }
        FileHandle.standardError.write(Data(String(format: "PortReclaimRelayTests: reboot behind \(relay), phone every 0.5 s: the phone served %.1f s after the new home up started (%.1f s after the cut; goal 10 s)\n",
                                                   took ?? -1, served?.timeIntervalSince(cutAt) ?? -1).utf8))
        FileHandle.standardError.write(Data("PortReclaimRelayTests: home up said: \(takenBack ?? "nothing")\n".utf8))
        let seconds = try #require(took, "the phone never served after the reboot: \(second.stderrText)\n\(phone.stdout.suffix(6))")
        #expect(seconds <= Self.servedBound, "served \(seconds) s after the new home up")
    }

    @Test("behind sslh, a second home up beside a live first one: refused and told the first's heartbeat came, the first is never ended and the phone never fails")
    func secondLiveHome() async throws {
        let world = try await World.make("relaySecondLiveHome", relay: .sslh)
        defer { world.remove() }
        let first = try world.homeUp(launcher: world.net.exec(.client))
        defer { first.stopGracefullyOrKill() }
        try #require(try await offPool { first.homeListening() } != nil, "\(first.stderrText)")
        let phone = try await world.startPhone()
        defer { phone.signal(SIGKILL); _ = phone.waitForExit(timeout: 5) }

        let other = try await offPool { try NetworkNamespaceLink(to: world.net, side: .server) }
        defer { other.remove() }
        let startedAt = Date()
        let second = try world.homeUp(launcher: other.exec)
        defer { second.stopGracefullyOrKill() }
        let refused = try await offPool { second.waitForLine(containing: "refused to listen", timeout: 30) }
        #expect(refused?.contains("held by a live home session from 127.0.0.1:") == true, "\(second.stderrText)")
        #expect(refused?.contains("its heartbeat came just now") == true, "\(refused ?? "")")
        // 12 s of both running: the second keeps asking, each time watching the first's heartbeat.
        let window = 12.0
        let rest = window - Date().timeIntervalSince(startedAt)
        if rest > 0 { try await Task.sleep(nanoseconds: UInt64(rest * 1e9)) }
        let attempts = phone.attempts(startedIn: startedAt...Date().addingTimeInterval(-3))
        #expect(attempts.count >= 10, "\(phone.stdout.suffix(10))")
        let failed = attempts.filter { !$0.ok }
        #expect(failed.isEmpty, "phone attempts that failed while the second home ran: \(failed.count) of \(attempts.count): \(phone.stdout.suffix(10))")
        #expect(first.isRunning)
        #expect(!first.stderrText.contains("disconnected") && !first.stderrText.contains("connection to VPS lost"), "\(first.stderrText)")
        #expect(second.isRunning && second.homeListening(timeout: 0) == nil)
        #expect(!second.stderrText.contains("taken back"), "\(second.stderrText)")
        let refusals = second.stderr.filter { $0.contains("refused to listen") }
        #expect(refusals.count >= 2 && refusals.allSatisfy { $0.contains("its heartbeat came just now") }, "\(second.stderrText)")
        FileHandle.standardError.write(Data("PortReclaimRelayTests: second live home behind sslh: \(refusals.count) refusals in \(Int(window)) s, \(attempts.count) phone attempts, \(failed.count) failed\n".utf8))
    }

    /// How long the first home stays stopped once the second's program watches: well under the
    /// program's `heartbeatSilence` (6 s), with room for a loaded machine to resume it.
    static let stall = 3.5

    @Test("behind sslh, a live home whose heartbeat stalls (its process stopped for 3.5 s) while a second home up's program watches it is not ended: the program sees the heartbeat resume")
    func stalledHeartbeat() async throws {
        let world = try await World.make("relayStalledHeartbeat", relay: .sslh)
        defer { world.remove() }
        let first = try world.homeUp(launcher: world.net.exec(.client))
        defer { first.signal(SIGCONT); first.stopGracefullyOrKill() }
        try #require(try await offPool { first.homeListening() } != nil, "\(first.stderrText)")
        let phone = try await world.startPhone()
        defer { phone.signal(SIGKILL); _ = phone.waitForExit(timeout: 5) }
        // Every forced command sshd starts (the first's mark so far) is one "Starting session" line.
        let sshd = world.fixture.sshd
        let before = Self.forcedCommands(sshd)

        let other = try await offPool { try NetworkNamespaceLink(to: world.net, side: .server) }
        defer { other.remove() }
        first.signal(SIGSTOP)
        let stoppedAt = Date()
        let second = try world.homeUp(launcher: other.exec)
        defer { second.stopGracefullyOrKill() }
        // The second's listen is refused and its reclaim program starts: the next forced command.
        let watching = try await offPool { waitUntil(timeout: 20) { Self.forcedCommands(sshd) > before } }
        try #require(watching, "the second home up's program never started: \(second.stderrText)")
        let watchedAt = Date()
        try await Task.sleep(nanoseconds: UInt64(Self.stall * 1e9))
        let early = second.stderr.filter { $0.contains("refused to listen") || $0.contains("taken back") }
        first.signal(SIGCONT)
        let resumedAt = Date()
        #expect(early.isEmpty, "the program answered before the heartbeat resumed: \(early)")
        let refused = try await offPool { second.waitForLine(containing: "refused to listen", timeout: 30) }
        #expect(refused?.contains("held by a live home session from 127.0.0.1:") == true && refused?.contains("its heartbeat came just now") == true,
                "\(second.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
        // The first kept its session and serves the phone again.
        let served = try await offPool { phone.firstServed(after: resumedAt, timeout: 20) }
        #expect(served != nil, "\(phone.stdout.suffix(6))")
        #expect(first.isRunning)
        #expect(!first.stderrText.contains("disconnected") && !first.stderrText.contains("connection to VPS lost"), "\(first.stderrText)")
        #expect(!second.stderrText.contains("taken back") && second.homeListening(timeout: 0) == nil, "\(second.stderrText)")
        FileHandle.standardError.write(Data(String(format: "PortReclaimRelayTests: heartbeat stalled %.1f s (%.1f s of it under the program's watch): not ended, phone served again %.1f s after the resume\n",
                                                   resumedAt.timeIntervalSince(stoppedAt), resumedAt.timeIntervalSince(watchedAt),
                                                   served.map { $0.timeIntervalSince(resumedAt) } ?? -1).utf8))
    }

    /// How many forced commands sshd has started (one "Starting session" line each at LogLevel VERBOSE).
    static func forcedCommands(_ sshd: SSHDServer) -> Int {
        sshd.log.components(separatedBy: "Starting session: forced-command").count - 1
    }
}
