import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The port reclaim with Debian's sslh in front of the VPS's sshd (SSH on a shared port): sshd's
/// peer is sslh on loopback, which acknowledges everything, so TCP cannot tell a dead home from
/// a live one and only the mark's heartbeat (`octunnel-beat`) can. Machines as in
/// PortReclaimTests; sshd with its defaults, behind `sslh -p VPS:port --ssh 127.0.0.1:sshd`.
@Suite(
    "home up behind a relay (sslh, a plain TCP relay): a dead session's VPS port taken back by its heartbeat",
    .ownThreads, .timeLimit(.minutes(6)))
struct PortReclaimRelayTests {
    /// A hang guard, not the goal (10 s, docs/benchmarks.md): several times the slowest seen
    /// here under load (9.1 s behind sslh, of which 6 s are the heartbeat's window).
    static let servedBound = 45.0

    @Test(
        "behind sslh or a plain TCP relay, a home reboots (link down without a FIN, back from a new address): the new home up ends the dead session for its missing heartbeat and the phone is served",
        arguments: [World.Relay.sslh, .tcp])
    func reboot(relay: World.Relay) async throws {
        let world = try await World.make("relayReboot", relay: relay)
        defer { world.remove() }
        let run = try await world.rebootWithPhone(
            timeout: Self.servedBound, label: "PortReclaimRelayTests: reboot behind \(relay)")
        // sshd's peer is the relay, on the VPS's loopback.
        #expect(
            run.takenBack?.contains("ended the dead home session from 127.0.0.1:") == true,
            "\(run.second.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
        #expect(
            run.takenBack?.contains("no heartbeat for \(PortReclaimProgram.heartbeatSilence) s") == true,
            "\(run.takenBack ?? "")")
        let seconds = try #require(
            run.took, "the phone never served after the reboot: \(run.second.stderrText)\n\(run.phoneTail)")
        #expect(seconds <= Self.servedBound, "served \(seconds) s after the new home up")
    }

    @Test(
        "behind sslh, a second home up beside a live first one: refused and told the first's heartbeat came, the first is never ended and the phone never fails"
    )
    func secondLiveHome() async throws {
        let world = try await World.make("relaySecondLiveHome", relay: .sslh)
        defer { world.remove() }
        // 12 s of both running: the second keeps asking, each time watching the first's heartbeat.
        let run = try await world.secondHomeBesideLiveFirst(window: 12)
        #expect(
            run.refused?.contains("held by a live home session from 127.0.0.1:") == true, "\(run.second.stderrText)")
        #expect(run.refused?.contains("its heartbeat came just now") == true, "\(run.refused ?? "")")
        #expect(!run.second.stderrText.contains("taken back"), "\(run.second.stderrText)")
        #expect(run.refusals.allSatisfy { $0.contains("its heartbeat came just now") }, "\(run.second.stderrText)")
        FileHandle.standardError.write(
            Data("PortReclaimRelayTests: second live home behind sslh: \(run.summary)\n".utf8))
    }

    /// How long the first home stays stopped once the second's program watches: well under the
    /// program's `heartbeatSilence` (6 s), with room for a loaded machine to resume it.
    static let stall = 3.5

    @Test(
        "behind sslh, a live home whose heartbeat stalls (its process stopped for 3.5 s) while a second home up's program watches it is not ended: the program sees the heartbeat resume"
    )
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
        #expect(
            refused?.contains("held by a live home session from 127.0.0.1:") == true
                && refused?.contains("its heartbeat came just now") == true,
            "\(second.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
        // The first kept its session and serves the phone again.
        let served = try await offPool { phone.firstServed(after: resumedAt, timeout: 20) }
        #expect(served != nil, "\(phone.stdout.suffix(6))")
        #expect(first.isRunning)
        #expect(
            !first.stderrText.contains("disconnected") && !first.stderrText.contains("connection to VPS lost"),
            "\(first.stderrText)")
        #expect(
            !second.stderrText.contains("taken back") && second.homeListening(timeout: 0) == nil, "\(second.stderrText)"
        )
        FileHandle.standardError.write(
            Data(
                String(
                    format:
                        "PortReclaimRelayTests: heartbeat stalled %.1f s (%.1f s of it under the program's watch): not ended, phone served again %.1f s after the resume\n",
                    resumedAt.timeIntervalSince(stoppedAt), resumedAt.timeIntervalSince(watchedAt),
                    served.map { $0.timeIntervalSince(resumedAt) } ?? -1
                ).utf8))
    }

    /// How many forced commands sshd has started (one "Starting session" line each at LogLevel VERBOSE).
    static func forcedCommands(_ sshd: SSHDServer) -> Int {
        sshd.log.components(separatedBy: "Starting session: forced-command").count - 1
    }
}
