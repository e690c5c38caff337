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

    @Test("a home reboots (link down without a FIN, back in a fresh namespace with a new address): the new home up ends the dead session and the phone is served within the bound")
    func reboot() async throws {
        let world = try await World.make("reboot")
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
        let takenBack = try await offPool { second.waitForLine(containing: "taken back", timeout: 90) }
        #expect(takenBack?.contains("ended the dead home session from \(world.net.clientAddress):") == true,
                "\(second.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
        let served = try await offPool { phone.firstServed(after: startedAt, timeout: 90) }
        let took = served.map { $0.timeIntervalSince(startedAt) }
        FileHandle.standardError.write(Data(String(format: "PortReclaimTests: reboot on sshd defaults, phone every 0.5 s: the phone served %.1f s after the new home up started (%.1f s after the cut; goal 10 s)\n",
                                                   took ?? -1, served?.timeIntervalSince(cutAt) ?? -1).utf8))
        FileHandle.standardError.write(Data("PortReclaimTests: home up said: \(takenBack ?? "nothing")\n".utf8))
        let seconds = try #require(took, "the phone never served after the reboot: \(second.stderrText)\n\(phone.stdout.suffix(6))")
        #expect(seconds <= Self.servedBound, "served \(seconds) s after the new home up (bound \(Self.servedBound)): \(second.stderrText)")
        #expect(second.stderrText.contains("ClientAliveInterval") == false, "\(second.stderrText)")
    }

    @Test("a home reboots while nothing connects to the port: the program provokes the dead client itself (one connection) and the new home up listens again")
    func rebootNobodyConnecting() async throws {
        let world = try await World.make("rebootNobodyConnecting")
        defer { world.remove() }
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
        #expect(second.stderrText.contains("taken back: ended the dead home session from \(world.net.clientAddress):"), "\(second.stderrText)")
        #expect(took <= Self.servedBound, "listening \(took) s after the new home up started")
        FileHandle.standardError.write(Data(String(format: "PortReclaimTests: reboot with nothing connecting: listening %.1f s after the new home up started\n", took).utf8))
    }

    @Test("a second home up beside a live first one: refused and told who holds the port, the first is never ended and the phone is served without a gap")
    func secondLiveHome() async throws {
        let world = try await World.make("secondLiveHome")
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
        #expect(refused?.contains("held by a live home session from \(world.net.clientAddress):") == true, "\(second.stderrText)")
        // 12 s of both running (the issue's 20 s, shortened for the suite): the second keeps asking.
        let window = 12.0
        let rest = window - Date().timeIntervalSince(startedAt)
        if rest > 0 { try await Task.sleep(nanoseconds: UInt64(rest * 1e9)) }
        let end = Date()
        let attempts = phone.attempts(startedIn: startedAt...end.addingTimeInterval(-3))
        #expect(attempts.count >= 10, "\(phone.stdout.suffix(10))")
        let failed = attempts.filter { !$0.ok }
        #expect(failed.isEmpty, "phone attempts that failed while the second home ran: \(failed.count) of \(attempts.count): \(phone.stdout.suffix(10))")
        #expect(first.isRunning)
        #expect(!first.stderrText.contains("disconnected") && !first.stderrText.contains("connection to VPS lost"), "\(first.stderrText)")
        #expect(second.isRunning)
        #expect(second.homeListening(timeout: 0) == nil)
        let refusals = second.stderr.filter { $0.contains("refused to listen") }
        #expect(refusals.count >= 2, "\(second.stderrText)")
        #expect(refusals.allSatisfy { $0.contains("live home session") }, "\(second.stderrText)")
        #expect(!world.fixture.sshd.log.contains("Exiting on signal"), "\(world.fixture.sshd.log.suffix(1500))")
        FileHandle.standardError.write(Data("PortReclaimTests: second live home: \(refusals.count) refusals in \(Int(window)) s, \(attempts.count) phone attempts, none failed\n".utf8))
    }

    /// A hang guard, not the goal (10 s, in bench.sh's roaming and reclaim rows): served again
    /// 2.5-3.0 s after the move. home up runs with its default keepalive (15 s): without its
    /// network watcher (issue 18) it would take 3 × 15 s + 1 s.
    static let addressChangeBound = 30.0

    @Test("the home's address changes while home up keeps running (a second link, the first address gone): the new session takes the port back and the phone is served again")
    func addressChange() async throws {
        let world = try await World.make("addressChange")
        defer { world.remove() }
        let second = try await offPool { try NetworkNamespaceMove(world.net) }
        let home = try world.homeKey.homeUp(remotePort: world.remotePort, homePort: world.backend.port, launcher: world.net.exec(.client))
        defer { home.stopGracefullyOrKill() }
        try #require(try await offPool { home.homeListening() } != nil, "\(home.stderrText)")
        let phone = try await world.startPhone()
        defer { phone.signal(SIGKILL); _ = phone.waitForExit(timeout: 5) }

        // The move: the first address vanishes (packets to it are dropped at the home, no reset),
        // the VPS is reached through the second link from now on.
        let movedAt = Date()
        try await offPool { try second.move() }
        let takenBack = try await offPool { home.waitForLine(containing: "taken back", timeout: 40) }
        #expect(takenBack?.contains("ended the dead home session from \(world.net.clientAddress):") == true,
                "\(home.stderrText)\n\(world.fixture.sshd.log.suffix(1500))")
        let served = try await offPool { phone.firstServed(after: takenBack == nil ? movedAt : Date(), timeout: 30) }
        let took = served.map { $0.timeIntervalSince(movedAt) }
        FileHandle.standardError.write(Data(String(format: "PortReclaimTests: address change (default keepalive, network watcher): the phone served again %.1f s after the move (goal 10 s)\n",
                                                   took ?? -1).utf8))
        let seconds = try #require(took, "the phone never served after the move: \(home.stderrText)\n\(phone.stdout.suffix(6))")
        #expect(seconds <= Self.addressChangeBound, "served \(seconds) s after the move (bound \(Self.addressChangeBound)): \(home.stderrText)")
    }

    @Test("a VPS port held by a program that is not an sshd session: named and left alone, home up keeps asking")
    func otherProgram() async throws {
        let fixture = try TunnelFixture()
        let homeKey = try HomeKey(fixture: fixture)
        let holder = try RunningProcess("/usr/bin/env", ["python3", "-c", """
            import socket, sys, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0)); s.listen(16)
            print("LISTENING %d" % s.getsockname()[1], flush=True)
            while True: time.sleep(60)
            """])
        defer { holder.signal(SIGKILL); _ = holder.waitForExit(timeout: 5) }
        let line = try #require(try await offPool { holder.waitForLine(containing: "LISTENING", stdout: true, timeout: 10) })
        let remotePort = try #require(Int(line.split(separator: " ").last ?? ""))
        try homeKey.authorize(remotePort: remotePort)
        let echo = try TCPTestServer.echo()
        let homeSide = try homeKey.homeUp(remotePort: remotePort, homePort: echo.port)
        defer { homeSide.stopGracefullyOrKill() }
        let refused = try await offPool { homeSide.waitForLine(containing: "refused to listen", timeout: 30) }
        #expect(refused?.contains("taken by another program (python3, pid \(holder.pid)") == true, "\(homeSide.stderrText)")
        #expect(refused?.contains("left alone") == true)
        let again = try await offPool { homeSide.waitForLine(containing: "refused to listen", after: homeSide.stderr.count, timeout: 15) }
        #expect(again != nil, "\(homeSide.stderrText)")
        #expect(holder.isRunning)
        #expect(homeSide.isRunning)
    }
}

/// home up's heartbeat mark against a key line older than it: the old program answers
/// `octunnel-beat` with `result=refused`, and home up marks its session the old way.
@Suite("home up: the heartbeat mark on an older key line", .ownThreads, .timeLimit(.minutes(2)))
struct HeartbeatFallbackTests {
    @Test("a key line whose program refuses octunnel-beat: home up runs octunnel-mark instead, once, and keeps listening")
    func olderLine() async throws {
        let fixture = try TunnelFixture()
        let homeKey = try HomeKey(fixture: fixture)
        let remotePort = freePort()
        let verbs = fixture.sshd.directory.file("verbs")
        let token = "octunnel-fallback-\(UInt32.random(in: 0...UInt32.max))"
        // The issue-19 program's answers, reduced to the two verbs it knows here and its refusal.
        let command = "echo $SSH_ORIGINAL_COMMAND >>\(verbs); case $SSH_ORIGINAL_COMMAND in octunnel-mark) export OCTUNNEL_TOKEN=\(token); exec cat >/dev/null;; "
            + "*) echo octunnel-reclaim v=1 result=refused port=127.0.0.1:\(remotePort) reason=verb; exit 1;; esac"
        let line = "restrict,port-forwarding,permitlisten=\"127.0.0.1:\(remotePort)\",command=\"\(command)\" \(homeKey.key.line)"
        try writeText(((try? readText(fixture.sshd.authorizedKeysPath)) ?? "") + line + "\n", to: fixture.sshd.authorizedKeysPath)
        let echo = try TCPTestServer.echo()
        let home = try homeKey.homeUp(remotePort: remotePort, homePort: echo.port)
        defer { home.stopGracefullyOrKill() }
        try #require(try await offPool { home.homeListening() } != nil, "\(home.stderrText)")
        // The old mark's cat runs (found by the token in its environment), after the refused beat.
        let marked = try await offPool { waitUntil(timeout: 20) { Self.processes(withEnvironment: "OCTUNNEL_TOKEN=\(token)") == 1 } }
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
        key = try KeyStore(home: OctunnelHome(path: home.path)).generate(comment: "home@octunnel", rotate: false).publicKey
    }

    /// Adds the home key's line for `remotePort`, as printed by `octunnel pubkey --restrict --listen`.
    func authorize(remotePort: Int) throws {
        let printed = try runProcess(octunnelBinary, ["pubkey", "--restrict", "--listen", "--remote-port", String(remotePort), "--home", home.path])
        guard printed.status == 0 else { throw HarnessError("pubkey: \(printed.stderr)") }
        let existing = (try? readText(fixture.sshd.authorizedKeysPath)) ?? ""
        try writeText(existing + printed.stdout, to: fixture.sshd.authorizedKeysPath)
    }

    /// `target` replaces sshd's own (e.g. a relay in front of it).
    func homeUp(remotePort: Int, homePort: Int, launcher: [String] = [], extra: [String] = [], target: String? = nil) throws -> RunningProcess {
        let command = launcher + [octunnelBinary, "home", "up", "--home", home.path, target ?? fixture.target, "--remote-port", String(remotePort),
                                  "--home-port", String(homePort), "--connect-timeout", "10", "--no-health"] + extra
        return try RunningProcess(command[0], Array(command.dropFirst()))
    }
}

/// The home, VPS and laptop namespaces, OpenCode at home, sshd with its defaults on the VPS,
/// the laptop's tunnel up, and the home key authorized for the VPS port. With `relay`, sshd
/// listens on the VPS's loopback only and a relay takes SSH on the VPS's address in front of
/// it, so sshd's peer for every client is the relay on 127.0.0.1.
final class World: @unchecked Sendable {
    /// What stands in front of sshd.
    enum Relay: String, Sendable, CustomStringConvertible {
        /// Debian's sslh (SSH and HTTPS on one port).
        case sslh
        /// A plain TCP relay (scripts/lib/delay-relay.py with no delay), as a TCP proxy or load balancer.
        case tcp
        var description: String { rawValue }
    }

    let net: NetworkNamespacePair
    let laptop: NetworkNamespaceLink
    let backend: OpenCodeStandIn
    let fixture: TunnelFixture
    let relay: SSLHRelay?
    let tcpRelay: RunningProcess?
    let homeKey: HomeKey
    let remotePort: Int
    /// Where the home and the laptop connect: sshd, or the relay in front of it.
    let target: String
    private var tunnel: RunningProcess?
    private(set) var localPort = 0

    private init(net: NetworkNamespacePair, laptop: NetworkNamespaceLink, relay: Relay?) throws {
        self.net = net
        self.laptop = laptop
        backend = try OpenCodeStandIn(launcher: net.exec(.client))
        fixture = try TunnelFixture(sshdAddress: relay == nil ? net.serverAddress : "127.0.0.1", sshdLauncher: net.exec(.server))
        let relayPort = freePort()
        do {
            self.relay = relay == .sslh ? try SSLHRelay(address: net.serverAddress, target: "127.0.0.1:\(fixture.sshd.port)", launcher: net.exec(.server)) : nil
            tcpRelay = relay == .tcp ? try Self.startTCPRelay(address: net.serverAddress, port: relayPort, sshdPort: fixture.sshd.port, launcher: net.exec(.server)) : nil
        } catch {
            backend.stop()
            fixture.sshd.stop(hard: true)
            throw error
        }
        target = self.relay?.target(user: "root") ?? (tcpRelay == nil ? fixture.target : "root@\(net.serverAddress):\(relayPort)")
        homeKey = try HomeKey(fixture: fixture)
        remotePort = freePort()
        try homeKey.authorize(remotePort: remotePort)
    }

    /// scripts/lib/delay-relay.py with no delay on `address:port`, to sshd on the VPS's loopback.
    private static func startTCPRelay(address: String, port: Int, sshdPort: Int, launcher: [String]) throws -> RunningProcess {
        let command = launcher + ["/usr/bin/env", "python3", packageRoot + "/scripts/lib/delay-relay.py", address, String(port),
                                  "127.0.0.1", String(sshdPort), "0"]
        let relay = try RunningProcess(command[0], Array(command.dropFirst()))
        guard relay.waitForLine(containing: "LISTENING", stdout: true) != nil else {
            relay.signal(SIGKILL)
            _ = relay.waitForExit(timeout: 5)
            throw HarnessError("the TCP relay did not start: \(relay.stderrText)")
        }
        return relay
    }

    static func make(_ test: String, relay: Relay? = nil) async throws -> World {
        let (net, laptop) = try await HomeNetworkTests.machines(test)
        do {
            return try await offPool { try World(net: net, laptop: laptop, relay: relay) }
        } catch {
            laptop.remove()
            net.remove()
            throw error
        }
    }

    func homeUp(launcher: [String]) throws -> RunningProcess {
        try homeKey.homeUp(remotePort: remotePort, homePort: backend.port, launcher: launcher, target: target)
    }

    /// Starts the laptop's tunnel and a phone behind it that starts a request every 0.5 s
    /// (each on its own thread, 3 s timeout), and waits for its first success.
    /// The power cut and the reboot: the home's link goes down first, then `first` dies (its
    /// FIN never leaves); 2 s of phone attempts meet the dead holder (as they would while the
    /// home boots); the home comes back in a fresh namespace with a new address, its OpenCode
    /// on the same port.
    func powerCutAndReboot(_ first: RunningProcess) async throws -> RebootedHome {
        try await offPool {
            try self.net.setLink(.client, up: false)
            first.signal(SIGKILL)
            _ = first.waitForExit(timeout: 5)
        }
        let cutAt = Date()
        try await Task.sleep(nanoseconds: 2_000_000_000)
        let home = try await offPool { try NetworkNamespaceLink(to: self.net, side: .server) }
        do {
            let backend = try await offPool { try OpenCodeStandIn(launcher: home.exec, port: self.backend.port) }
            return RebootedHome(home: home, backend: backend, cutAt: cutAt)
        } catch {
            home.remove()
            throw error
        }
    }

    func startPhone() async throws -> RunningProcess {
        let tunnel = try fixture.up(remotePort: remotePort, launcher: laptop.exec, via: target)
        self.tunnel = tunnel
        localPort = try #require(try await offPool { tunnel.forwardedPort(timeout: 30) }, "\(tunnel.stderrText)")
        let script = """
        import socket, sys, threading, time
        port = int(sys.argv[1])
        def attempt(started):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=3)
                s.settimeout(3)
                s.sendall(b"GET /global/health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                word = "ok" if data.startswith(b"HTTP/1.1 200") and b"healthy" in data else "bad"
                print("%s %.3f %.3f" % (word, started, time.time()), flush=True)
            except Exception as e:
                print("fail %.3f %.3f %s" % (started, time.time(), type(e).__name__), flush=True)
        while True:
            threading.Thread(target=attempt, args=(time.time(),), daemon=True).start()
            time.sleep(0.5)
        """
        let command = laptop.exec + ["/usr/bin/env", "python3", "-c", script, String(localPort)]
        let phone = try RunningProcess(command[0], Array(command.dropFirst()))
        try #require(try await offPool { phone.firstServed(after: Date(timeIntervalSince1970: 0), timeout: 30) } != nil,
                     "the phone was never served: \(phone.stdout.suffix(5)) \(tunnel.stderrText)")
        return phone
    }

    /// Stops everything, then deletes the namespaces.
    func remove() {
        tunnel?.stopGracefullyOrKill()
        backend.stop()
        relay?.stop()
        tcpRelay?.signal(SIGKILL)
        _ = tcpRelay?.waitForExit(timeout: 5)
        fixture.sshd.stop(hard: true)
        laptop.remove()
        net.remove()
    }
}

extension RunningProcess {
    /// One phone attempt: when it started and ended (epoch seconds) and whether it was answered 200.
    struct PhoneAttempt {
        let ok: Bool
        let started: Date
        let ended: Date
    }

    /// The phone's attempts so far.
    var phoneAttempts: [PhoneAttempt] {
        stdout.compactMap { line in
            let words = line.split(separator: " ")
            guard words.count >= 3, let started = Double(words[1]), let ended = Double(words[2]) else { return nil }
            return PhoneAttempt(ok: words[0] == "ok", started: Date(timeIntervalSince1970: started), ended: Date(timeIntervalSince1970: ended))
        }
    }

    /// When the phone was first answered by an attempt that ended after `date`.
    func firstServed(after date: Date, timeout: Double) -> Date? {
        var found: Date?
        _ = waitUntil(timeout: timeout) {
            found = phoneAttempts.filter { $0.ok && $0.ended > date }.map(\.ended).min()
            return found != nil
        }
        return found
    }

    /// The attempts that started within `range` (all finished, at most 3 s after they started).
    func attempts(startedIn range: ClosedRange<Date>) -> [PhoneAttempt] {
        phoneAttempts.filter { range.contains($0.started) }
    }
}

/// The home after `World.powerCutAndReboot`: its new namespace and OpenCode, and when the power went.
struct RebootedHome {
    let home: NetworkNamespaceLink
    let backend: OpenCodeStandIn
    let cutAt: Date

    /// OpenCode stopped, then the namespace removed.
    func remove() {
        backend.stop()
        home.remove()
    }
}
