import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The VPS port of a home session that died without a word, taken back by the next `home up`
/// through the home key's forced command (`PortReclaimProgram`), on sshd with its defaults
/// (no ClientAliveInterval) while a phone keeps trying every 0.5 s through the laptop's tunnel.
/// Machines are network namespaces as in HomeNetworkTests: the home (pair client), the VPS
/// (pair server), the laptop and a rebooted home each on a link of their own to the VPS.
@Suite("home up: a dead session's VPS port taken back", .ownThreads, .timeLimit(.minutes(6)))
struct PortReclaimTests {
    /// A hang guard, not the goal (issue 25): the goal (10 s) is measured by scripts/lib/reclaim.sh
    /// in bench.sh. Served 0.9-2.5 s here, and once 20.5 s in a loaded full run (nothing
    /// connecting). Without the reclaim the port is held for good.
    static let servedBound = 60.0

    @Test(
        "a home reboots (link down without a FIN, back in a fresh namespace with a new address): the new home up ends the dead session and the phone is served within the bound"
    )
    func reboot() async throws {
        try await World.with("reboot") { world in
            let run = try await world.rebootWithPhone(timeout: 90, label: "PortReclaimTests: reboot on sshd defaults")
            #expect(
                run.takenBack?.contains("ended the dead home session from \(world.net.clientAddress):") == true,
                "\(run.second.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
            let seconds = try #require(
                run.took, "the phone never served after the reboot: \(run.second.stderrText)\n\(run.phoneTail)")
            #expect(
                seconds <= Self.servedBound,
                "served \(seconds) s after the new home up (bound \(Self.servedBound)): \(run.second.stderrText)")
            #expect(run.second.stderrText.contains("ClientAliveInterval") == false, "\(run.second.stderrText)")
        }
    }

    @Test(
        "a home with two forwards reboots while a phone on each of the laptop's two forwards keeps trying: the new home up takes both VPS ports back, each from the dead session's own mark, listens on both, and both phones are served within the bound"
    )
    func rebootTwoForwards() async throws {
        try await World.with("rebootTwoForwards", appForward: true) { world in
            let app = try #require(world.appRemotePort)
            let run = try await world.rebootWithPhone(
                timeout: 90, label: "PortReclaimTests: reboot with two forwards",
                alsoWaitFor: ["VPS 127.0.0.1:\(app) → home"])
            #expect(run.takenBack != nil, "\(run.second.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
            let second = run.second
            #expect(
                second.waitForLine(containing: "VPS 127.0.0.1:\(world.remotePort) → home", timeout: 0) != nil,
                "\(second.stderrText)")
            #expect(
                second.waitForLine(containing: "VPS 127.0.0.1:\(app) → home", timeout: 0) != nil, "\(second.stderrText)"
            )
            #expect(
                second.stderrText.contains("VPS 127.0.0.1:\(app) taken back")
                    || second.stderrText.contains("VPS 127.0.0.1:\(app) → home"),
                "\(second.stderrText)")
            #expect(!second.stderrText.contains("forbids"), "\(second.stderrText)")
            let seconds = try #require(
                run.took, "OpenCode's phone never served after the reboot: \(second.stderrText)\n\(run.phoneTail)")
            let appSeconds = try #require(
                run.appTook, "the app's phone never served after the reboot: \(second.stderrText)\n\(run.phoneTail)")
            #expect(
                max(seconds, appSeconds) <= Self.servedBound,
                "served \(seconds) s and \(appSeconds) s after the new home up (bound \(Self.servedBound))")
        }
    }

    @Test(
        "a home reboots while nothing connects to the port: the program provokes the dead client itself (one connection) and the new home up listens again"
    )
    func rebootNobodyConnecting() async throws {
        try await World.with("rebootNobodyConnecting") { world in
            let first = try world.homeUp(launcher: world.net.exec(.client))
            defer { first.signal(SIGKILL); _ = first.waitForExit(timeout: 5) }
            try #require(try await offPool { first.homeListening() } != nil, "\(first.stderrText)")
            try await offPool {
                try world.net.setLink(.client, up: false)
                first.signal(SIGKILL)
                _ = first.waitForExit(timeout: 5)
            }
            let home = try await offPool { try NetworkNamespaceLink(to: world.net, side: .server) }
            defer { home.remove() }
            let startedAt = Date()
            let second = try world.homeUp(launcher: home.exec)
            defer { second.stopGracefullyOrKill() }
            // The dead client had nothing in flight: the program's own connection makes sshd send it a
            // CHANNEL_OPEN, resent 3 times within about 1.4 s on this link.
            let listening = try await offPool { second.homeListening(timeout: 90) }
            let took = Date().timeIntervalSince(startedAt)
            #expect(listening != nil, "\(second.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
            #expect(
                second.stderrText.contains("taken back: ended the dead home session from \(world.net.clientAddress):"),
                "\(second.stderrText)")
            #expect(took <= Self.servedBound, "listening \(took) s after the new home up started")
            FileHandle.standardError.write(
                Data(
                    String(
                        format:
                            "PortReclaimTests: reboot with nothing connecting: listening %.1f s after the new home up started\n",
                        took
                    ).utf8))
        }
    }

    @Test(
        "a second home up beside a live first one: refused and told who holds the port, the first is never ended and the phone is served without a gap"
    )
    func secondLiveHome() async throws {
        try await World.with("secondLiveHome") { world in
            // 12 s of both running (the issue's 20 s, shortened for the suite).
            let run = try await world.secondHomeBesideLiveFirst(window: 12)
            #expect(
                run.refused?.contains("held by a live home session from \(world.net.clientAddress):") == true,
                "\(run.second.stderrText)")
            #expect(run.refusals.allSatisfy { $0.contains("live home session") }, "\(run.second.stderrText)")
            #expect(!world.fixture.sshd.log.contains("Exiting on signal"), "\(world.fixture.sshd.log.suffix(1500))")
            FileHandle.standardError.write(Data("PortReclaimTests: second live home: \(run.summary)\n".utf8))
        }
    }

    /// A hang guard, not the goal (10 s, in bench.sh's roaming and reclaim rows): served again
    /// 2.5-3.0 s after the move. home up runs with its default keepalive (15 s): without its
    /// network watcher (issue 18) it would take 3 × 15 s + 1 s.
    static let addressChangeBound = 30.0

    @Test(
        "the home's address changes while home up keeps running (a second link, the first address gone): the new session takes the port back and the phone is served again"
    )
    func addressChange() async throws {
        try await World.with("addressChange") { world in
            let second = try await offPool { try NetworkNamespaceMove(world.net) }
            let home = try world.homeKey.homeUp(
                remotePort: world.remotePort, homePort: world.backend.port, launcher: world.net.exec(.client))
            defer { home.stopGracefullyOrKill() }
            try #require(try await offPool { home.homeListening() } != nil, "\(home.stderrText)")
            let phone = try await world.startPhone()
            defer { phone.signal(SIGKILL); _ = phone.waitForExit(timeout: 5) }

            // The move: the first address vanishes (packets to it are dropped at the home, no reset),
            // the VPS is reached through the second link from now on.
            let movedAt = Date()
            try await offPool { try second.move() }
            let takenBack = try await offPool { home.waitForLine(containing: "taken back", timeout: 40) }
            #expect(
                takenBack?.contains("ended the dead home session from \(world.net.clientAddress):") == true,
                "\(home.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
            let served = try await offPool {
                phone.firstServed(after: takenBack == nil ? movedAt : Date(), timeout: 30)
            }
            let took = served.map { $0.timeIntervalSince(movedAt) }
            FileHandle.standardError.write(
                Data(
                    String(
                        format:
                            "PortReclaimTests: address change (default keepalive, network watcher): the phone served again %.1f s after the move (goal 10 s)\n",
                        took ?? -1
                    ).utf8))
            let seconds = try #require(
                took, "the phone never served after the move: \(home.stderrText)\n\(phone.stdout.suffix(6))")
            #expect(
                seconds <= Self.addressChangeBound,
                "served \(seconds) s after the move (bound \(Self.addressChangeBound)): \(home.stderrText)")
        }
    }

    @Test("a VPS port held by a program that is not an sshd session: named and left alone, home up keeps asking")
    func otherProgram() async throws {
        let fixture = try TunnelFixture()
        let homeKey = try HomeKey(fixture: fixture)
        let holder = try RunningProcess(
            python3,
            [
                "-c",
                """
                import socket, sys, time
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", 0)); s.listen(16)
                print("LISTENING %d" % s.getsockname()[1], flush=True)
                while True: time.sleep(60)
                """,
            ])
        defer { holder.signal(SIGKILL); _ = holder.waitForExit(timeout: 5) }
        let line = try #require(
            try await offPool { holder.waitForLine(containing: "LISTENING", stdout: true, timeout: 10) })
        let remotePort = try #require(Int(line.split(separator: " ").last ?? ""))
        try homeKey.authorize(remotePort: remotePort)
        let echo = try TCPTestServer.echo()
        let homeSide = try homeKey.homeUp(remotePort: remotePort, homePort: echo.port)
        defer { homeSide.stopGracefullyOrKill() }
        let refused = try await offPool { homeSide.waitForLine(containing: "refused to listen", timeout: 30) }
        #expect(
            refused?.contains("taken by another program (python3, pid \(holder.pid)") == true, "\(homeSide.stderrText)")
        #expect(refused?.contains("left alone") == true)
        let again = try await offPool {
            homeSide.waitForLine(containing: "refused to listen", after: homeSide.stderr.count, timeout: 15)
        }
        #expect(again != nil, "\(homeSide.stderrText)")
        #expect(holder.isRunning)
        #expect(homeSide.isRunning)
    }
}

/// home up's heartbeat mark against a key line older than it: the old program answers
/// `octunnel-beat` with `result=refused`, and home up marks its session the old way.
@Suite("home up: the heartbeat mark on an older key line", .ownThreads, .timeLimit(.minutes(2)))
struct HeartbeatFallbackTests {
    @Test(
        "a key line whose program refuses octunnel-beat: home up runs octunnel-mark instead, once, and keeps listening")
    func olderLine() async throws {
        let fixture = try TunnelFixture()
        let homeKey = try HomeKey(fixture: fixture)
        let remotePort = freePort()
        let verbs = fixture.sshd.directory.file("verbs")
        let token = "octunnel-fallback-\(UInt32.random(in: 0...UInt32.max))"
        // The issue-19 program's answers, reduced to the two verbs it knows here and its refusal.
        let command =
            "echo $SSH_ORIGINAL_COMMAND >>\(verbs); case $SSH_ORIGINAL_COMMAND in octunnel-mark) export OCTUNNEL_TOKEN=\(token); exec cat >/dev/null;; "
            + "*) echo octunnel-reclaim v=1 result=refused port=127.0.0.1:\(remotePort) reason=verb; exit 1;; esac"
        let line =
            "restrict,port-forwarding,permitlisten=\"127.0.0.1:\(remotePort)\",command=\"\(command)\" \(homeKey.key.line)"
        try writeText(
            ((try? readText(fixture.sshd.authorizedKeysPath)) ?? "") + line + "\n", to: fixture.sshd.authorizedKeysPath)
        let echo = try TCPTestServer.echo()
        let home = try homeKey.homeUp(remotePort: remotePort, homePort: echo.port)
        defer { home.stopGracefullyOrKill() }
        try #require(try await offPool { home.homeListening() } != nil, "\(home.stderrText)")
        // The old mark's cat runs (found by the token in its environment), after the refused beat.
        let marked = try await offPool {
            waitUntil(timeout: 20) { Self.processes(withEnvironment: "OCTUNNEL_TOKEN=\(token)") == 1 }
        }
        #expect(marked, "verbs asked: \((try? readText(verbs)) ?? "none")\n\(home.stderrText)")
        #expect(((try? readText(verbs)) ?? "") == "octunnel-beat\noctunnel-mark\n")
        #expect(home.isRunning && !home.stderrText.contains("refused"), "\(home.stderrText)")
    }

    /// How many processes have `entry` in their environment.
    static func processes(withEnvironment entry: String) -> Int {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { Int($0) != nil }
        return pids.filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return data.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == entry }
        }.count
    }
}

/// The home machines' own key (a second octunnel home directory), authorized with the line
/// `pubkey --restrict --listen` prints; the fixture's key stays the laptop's, unrestricted.
struct HomeKey {
    let fixture: TunnelFixture
    let home: TempDirectory
    let key: SSHPublicKey

    init(fixture: TunnelFixture) throws {
        self.fixture = fixture
        home = try TempDirectory("octunnel-homekey")
        key = try KeyStore(directory: OctunnelDirectory(path: home.path)).generate(
            comment: "home@octunnel", rotate: false
        ).publicKey
    }

    /// Adds the home key's line for `remotePort` (and the `also` ports, as `-R` forwards), as
    /// printed by `octunnel pubkey --restrict --listen`.
    func authorize(remotePort: Int, also: [Int] = []) throws {
        let printed = try run(
            octunnelBinary,
            ["pubkey", "--restrict", "--listen", "--remote-port", String(remotePort), "--home", home.path]
                + also.flatMap { ["-R", "\($0):127.0.0.1:1"] })
        guard printed.status == 0 else { throw HarnessError("pubkey: \(printed.stderr)") }
        let existing = (try? readText(fixture.sshd.authorizedKeysPath)) ?? ""
        try writeText(existing + printed.stdout, to: fixture.sshd.authorizedKeysPath)
    }

    /// `target` replaces sshd's own (e.g. a relay in front of it).
    func homeUp(
        remotePort: Int, homePort: Int, launcher: [String] = [], extra: [String] = [], target: String? = nil
    ) throws -> RunningProcess {
        let command =
            launcher + [
                octunnelBinary, "home", "up", "--home", home.path, target ?? fixture.target, "--remote-port",
                String(remotePort),
                "--home-port", String(homePort), "--connect-timeout", "10", "--no-health",
            ] + extra
        return try RunningProcess(command[0], Array(command.dropFirst()))
    }
}
