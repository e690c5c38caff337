import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A laptop that roams: two machines (network namespaces) joined by two links, the laptop's
/// address on the first vanishing as the second comes up (a move), the same while `tunnel up`
/// is stopped (a sleep: SIGSTOP, the move, SIGCONT), a change on the other link that concerns
/// no session, and a session that died silently (its replies blackholed by the VPS) found by
/// the first request after a silence. Every "served" check is a request through the local
/// port with every byte checked; `tunnel up` runs with its default keepalive (15 s) unless said.
/// The time limit is a hang guard: in a full run beside two busy loops the set-ups alone took
/// 90-110 s, and 3 minutes ran out for every test of the suite once (2026-11-24, CI4).
@Suite("roaming: network changes and wakes", .ownThreads, .timeLimit(.minutes(6)))
struct RoamingTests {
    /// A hang guard, not the goal (issue 25): the goal is 3 s, measured against `ssh -L` by
    /// scripts/lib/roaming.sh in bench.sh (0.4 s after a move, 0.1 s after a wake). Served
    /// 0.6-1.1 s here; 20 s still tells the watcher from keepalive (3 × 15 s + 1 s).
    static let servedBound = 20.0

    @Test(
        "a move (the session's address vanishes, a new link and route come up): served again within the bound, one reconnect, said as a network change"
    )
    func move() async throws {
        try await Self.withLaptopAndVPS("move") { setup in
            let (move, tunnel) = (setup.move, setup.tunnel)
            let before = tunnel.stdout.count

            let served = try await setup.servedAfter { try move.move() }
            FileHandle.standardError.write(
                Data(
                    String(
                        format: "RoamingTests.move: served again %.2f s after the move (goal 3 s, bound %.0f s)\n",
                        served,
                        Self.servedBound
                    ).utf8))
            #expect(served <= Self.servedBound, "served again \(served) s after the move: \(tunnel.stdout.suffix(8))")
            let now = try #require(
                await tunnel.event("reconnectingNow", after: before, timeout: 1), "\(tunnel.stdout.suffix(8))")
            #expect(now.object["cause"] as? String == "networkChange", "\(now.object)")
            #expect((now.object["reason"] as? String ?? "").contains("is gone"), "\(now.object)")
            let back = try #require(
                await tunnel.event("reconnected", after: before, timeout: 5), "\(tunnel.stdout.suffix(8))")
            #expect(back.object["cause"] as? String == "networkChange")
            let status = try setup.fixture.status()
            #expect(status["reconnects"] as? Int == 1, "\(status)")
            // The status says the latest change: the reconnect, or, when the new link's announcements came
            // after it (the session's own address gone settles in 30 ms; `ip` steps can be slower under
            // load), the new session probed and kept. Never a second reconnect (above).
            let last = status["lastNetworkEvent"] as? String ?? ""
            #expect(last.hasPrefix("reconnected ") || last.hasSuffix("after a network change: kept"), "\(status)")
        }
    }

    @Test("asleep (SIGSTOP), moved while asleep, woken (SIGCONT) 10 s later: served again within the bound of waking")
    func sleepAndMove() async throws {
        try await Self.withLaptopAndVPS("sleepAndMove") { setup in
            let (move, tunnel) = (setup.move, setup.tunnel)
            let before = tunnel.stdout.count

            let served = try await setup.servedAfter {
                tunnel.signal(SIGSTOP)
                try move.move()
                // The one deliberate wait: the sleep.
                usleep(10_000_000)
                tunnel.signal(SIGCONT)
            }
            FileHandle.standardError.write(
                Data(
                    String(
                        format:
                            "RoamingTests.sleepAndMove: served again %.2f s after waking (goal 3 s, bound %.0f s)\n",
                        served, Self.servedBound
                    ).utf8))
            #expect(served <= Self.servedBound, "served again \(served) s after waking: \(tunnel.stdout.suffix(8))")
            #expect(await tunnel.event("reconnected", after: before, timeout: 5) != nil, "\(tunnel.stdout.suffix(8))")
            #expect(try setup.fixture.status()["reconnects"] as? Int == 1)
        }
    }

    @Test(
        "addresses and routes come and go on the other link during 30 s of steady requests: each change is probed and answered, no reconnect, every request answered"
    )
    func unrelatedChange() async throws {
        try await Self.withLaptopAndVPS("unrelatedChange") { setup in
            let (net, move, tunnel, port, scratch) = (setup.net, setup.move, setup.tunnel, setup.port, setup.scratch)
            let before = tunnel.stdout.count

            let launcher = net.exec(.client)
            let requests = Task.detached { () -> [String] in
                var problems: [String] = []
                let end = Date().addingTimeInterval(30)
                var count = 0
                while Date() < end {
                    count += 1
                    if let problem = try? bytesThroughProblem(
                        launcher: launcher, port: port, scratch: scratch, timeout: 10)
                    {
                        problems.append("request \(count): \(problem)")
                    }
                    usleep(200_000)
                }
                return problems + ["\(count) requests"]
            }
            for _ in 0..<5 {
                try await Task.sleep(nanoseconds: 5_000_000_000)
                try await offPool { try move.unrelatedChange() }
            }
            let outcome = await requests.value
            #expect(outcome.count == 1, "requests failed: \(outcome)")
            FileHandle.standardError.write(
                Data("RoamingTests.unrelatedChange: \(outcome.last ?? ""), \(outcome.count - 1) failed\n".utf8))
            #expect(await tunnel.event("disconnected", after: before, timeout: 0) == nil, "\(tunnel.stdout.suffix(8))")
            let probed = try #require(
                await tunnel.event("probing", after: before, timeout: 1),
                "the change was not noticed: \(tunnel.stdout.suffix(8))")
            #expect(probed.object["cause"] as? String == "networkChange")
            #expect(
                await tunnel.event("probeAnswered", after: probed.index, timeout: 3) != nil,
                "\(tunnel.stdout.suffix(8))")
            let status = try setup.fixture.status()
            #expect(status["reconnects"] as? Int == 0, "\(status)")
            #expect((status["lastNetworkEvent"] as? String ?? "").hasSuffix(": kept"), "\(status)")
        }
    }

    @Test(
        "a session dead without a sign (the VPS's replies to it blackholed), --keepalive 5: the first request after 8 s of silence is answered within the bound, through a new session"
    )
    func firstRequestAfterSilence() async throws {
        try await Self.withLaptopAndVPS("firstRequestAfterSilence", keepalive: 5) { setup in
            let (net, move, tunnel, port, scratch) = (setup.net, setup.move, setup.tunnel, setup.port, setup.scratch)
            let sshPort = setup.fixture.sshd.port
            let ports = try await offPool { try move.establishedClientPorts(toServerPort: sshPort) }
            let session = try #require(ports.count == 1 ? ports.first : nil, "one SSH connection expected: \(ports)")
            let before = tunnel.stdout.count
            let launcher = net.exec(.client)
            let (took, problem) = try await offPool { () -> (Double, String?) in
                try move.blackholeReplies(toClientPort: session)
                // The one deliberate wait: the silence (more than a keepalive interval, less than 3).
                usleep(8_000_000)
                let askedAt = Date()
                let problem = try bytesThroughProblem(launcher: launcher, port: port, scratch: scratch, timeout: 20)
                return (Date().timeIntervalSince(askedAt), problem)
            }
            FileHandle.standardError.write(
                Data(
                    String(
                        format: "RoamingTests.firstRequestAfterSilence: answered in %.2f s (%@)\n", took,
                        problem ?? "ok"
                    ).utf8))
            #expect(problem == nil, "the first request after the silence: \(problem ?? "") \(tunnel.stdout.suffix(8))")
            #expect(took <= Self.servedBound, "answered \(took) s after it was sent")
            let probed = try #require(
                await tunnel.event("probing", after: before, timeout: 0), "\(tunnel.stdout.suffix(8))")
            #expect(probed.object["cause"] as? String == "clientAfterSilence")
            if let died = await tunnel.event("disconnected", after: before, timeout: 0) {
                #expect(
                    died.index > probed.index,
                    "died before the request: \(tunnel.stdout.suffix(from: max(0, before - 2)))")
            }
            #expect(
                await tunnel.event("reconnected", after: probed.index, timeout: 1) != nil, "\(tunnel.stdout.suffix(8))")
        }
    }

    @Test(
        "the first path dies (the VPS's end of it down) and the session with it; a move while an attempt hangs on the dead path: the attempt is dropped and a new one serves within the bound"
    )
    func moveWhileAnAttemptHangs() async throws {
        try await Self.withLaptopAndVPS("moveWhileAnAttemptHangs", keepalive: 2) { setup in
            let (net, move, tunnel) = (setup.net, setup.move, setup.tunnel)
            let before = tunnel.stdout.count
            try await offPool { try net.setLink(.server, up: false) }
            let dead = try #require(
                await tunnel.event("disconnected", after: before, timeout: 30), "\(tunnel.stdout.suffix(6))")
            // An attempt over the dead path: its SYNs vanish, it would wait out --connect-timeout (10 s).
            let attempt = try #require(
                await tunnel.event("connecting", after: dead.index, timeout: 15), "\(tunnel.stdout.suffix(6))")
            let served = try await setup.servedAfter { try move.move() }
            FileHandle.standardError.write(
                Data(
                    String(format: "RoamingTests.moveWhileAnAttemptHangs: served again %.2f s after the move\n", served)
                        .utf8))
            #expect(served <= Self.servedBound, "served again \(served) s after the move: \(tunnel.stdout.suffix(8))")
            let now = try #require(
                await tunnel.event("reconnectingNow", after: attempt.index, timeout: 0), "\(tunnel.stdout.suffix(8))")
            #expect((now.object["reason"] as? String ?? "").contains("a new one starts now"), "\(now.object)")
        }
    }

    @Test(
        "home up moves (its address vanishes, a new link comes up): a new session within 3 s, said as a network change")
    func homeMoves() async throws {
        let (net, laptop) = try await HomeNetworkTests.machines("RoamingTests.homeMoves")
        defer { net.remove() }
        defer { laptop.remove() }
        let move = try await offPool {
            let move = try NetworkNamespaceMove(net)
            try move.settle()
            return move
        }
        let backend = try OpenCodeStandIn(launcher: net.exec(.client))
        defer { backend.stop() }
        // The laptop served again after the move needs the VPS port back: PortReclaimTests.addressChange
        // checks that through the home key's forced command. sshd's ClientAliveInterval cannot be
        // relied on here: the laptop's tunnel keeps the session busy, so sshd never probes (issue 19).
        let fixture = try await offPool {
            try TunnelFixture(sshdAddress: net.serverAddress, sshdLauncher: net.exec(.server))
        }
        defer { fixture.sshd.stop(hard: true) }
        let remotePort = freePort()
        let homeSide = try fixture.homeUp(
            remotePort: remotePort, homePort: backend.port, extra: ["--json", "--no-health"],
            launcher: net.exec(.client))
        defer { homeSide.stopGracefullyOrKill() }
        let listening = try #require(
            await homeSide.event("listening", after: 0, timeout: 30), "\(homeSide.stdout) \(homeSide.stderrText)")
        let scratch = try TempDirectory("octunnel-homemove")
        let (tunnel, _) = try await fixture.laptopServed(
            remotePort: remotePort, launcher: laptop.exec, scratch: scratch,
            before: "the move")
        defer { tunnel.stopGracefullyOrKill() }

        let movedAt = try await offPool {
            try move.move(); return Date()
        }
        let now = try #require(
            await homeSide.event("reconnectingNow", after: listening.index, timeout: 5), "\(homeSide.stdout.suffix(6))")
        #expect(now.object["cause"] as? String == "networkChange", "\(now.object)")
        let connected = try #require(
            await homeSide.event("connected", after: now.index, timeout: 10), "\(homeSide.stdout.suffix(6))")
        let newSession = homeSide.stdoutArrival(connected.index).timeIntervalSince(movedAt)
        #expect(newSession <= 3, "home's new session \(newSession) s after the move")
        FileHandle.standardError.write(
            Data(String(format: "RoamingTests.homeMoves: home's new session %.2f s after the move\n", newSession).utf8))
    }

    // MARK: - The machines

    struct Setup {
        let net: NetworkNamespacePair
        let move: NetworkNamespaceMove
        let backend: OpenCodeStandIn
        let fixture: TunnelFixture
        let tunnel: RunningProcess
        /// The tunnel's local port on the laptop, once it forwards.
        var port: Int
        let scratch: TempDirectory

        /// Runs `event` (a move, a sleep), then sends requests through `port` until one is served;
        /// returns the seconds from the end of `event` to that answer. All of it runs on one thread
        /// of its own: a time taken across awaits on the test pool also counts however long a
        /// loaded suite keeps that pool busy (seconds, seen in full runs), which is not the tunnel's.
        func servedAfter(
            bound: Double = RoamingTests.servedBound + 20, _ event: @escaping @Sendable () throws -> Void
        ) async throws -> Double {
            let (launcher, port, scratch) = (net.exec(.client), port, scratch)
            return try await offPool {
                try event()
                let since = Date()
                var last = ""
                while Date().timeIntervalSince(since) < bound {
                    guard
                        let problem = try bytesThroughProblem(
                            launcher: launcher, port: port, scratch: scratch, timeout: 3)
                    else {
                        return Date().timeIntervalSince(since)
                    }
                    last = problem
                    usleep(50_000)
                }
                throw HarnessError("not served within \(bound) s: \(last)")
            }
        }

        /// Stops what runs in the namespaces, then deletes them.
        func stop() {
            tunnel.signal(SIGCONT)
            tunnel.stopGracefullyOrKill()
            fixture.sshd.stop(hard: true)
            backend.stop()
            net.remove()
        }
    }

    /// `tunnel status --json` of the fixture's home (other suites ask it by this name).
    static func status(_ fixture: TunnelFixture) throws -> [String: Any] { try fixture.status() }

    /// `laptopAndVPS(test)` handed to `body`, and stopped after it whatever `body` did.
    static func withLaptopAndVPS(
        _ test: String, keepalive: Int? = nil, _ body: (Setup) async throws -> Void
    ) async throws {
        let setup = try await laptopAndVPS(test, keepalive: keepalive)
        defer { setup.stop() }
        try await body(setup)
    }

    /// The laptop (the pair's client, two links) and the VPS (sshd and the OpenCode stand-in),
    /// `tunnel up --json` on the laptop, one request through it checked. Skipped where this
    /// machine cannot make namespaces.
    static func laptopAndVPS(_ test: String, keepalive: Int? = nil) async throws -> Setup {
        let net = try await namespacesOrSkip("RoamingTests.\(test)") {
            try await offPool { try NetworkNamespacePair() }
        }
        do {
            let move = try await offPool {
                let move = try NetworkNamespaceMove(net)
                try move.settle()
                return move
            }
            // Off the test pool: the stand-in's start is a blocking wait, and a loaded full run
            // keeps the pool's two threads busy (namespace set-ups took 90-110 s there).
            let backend = try await offPool { try OpenCodeStandIn(launcher: net.exec(.server)) }
            do {
                let fixture = try await offPool {
                    try TunnelFixture(sshdAddress: net.serverAddress, sshdLauncher: net.exec(.server))
                }
                let extra = ["--json"] + (keepalive.map { ["--keepalive", String($0)] } ?? [])
                let tunnel = try fixture.up(remotePort: backend.port, extra: extra, launcher: net.exec(.client))
                let scratch = try TempDirectory("octunnel-roam")
                var setup = Setup(
                    net: net, move: move, backend: backend, fixture: fixture, tunnel: tunnel, port: 0, scratch: scratch)
                guard let forwarding = await tunnel.event("forwarding", after: 0, timeout: 30),
                    let port = forwarding.object["localPort"] as? Int
                else {
                    setup.stop()
                    throw HarnessError("tunnel up did not forward: \(tunnel.stdout) \(tunnel.stderrText)")
                }
                setup.port = port
                if let problem = try await offPool({
                    try bytesThroughProblem(launcher: net.exec(.client), port: port, scratch: scratch)
                }) {
                    setup.stop()
                    throw HarnessError("before the change: \(problem)")
                }
                return setup
            } catch {
                backend.stop()
                throw error
            }
        } catch {
            net.remove()
            throw error
        }
    }
}
