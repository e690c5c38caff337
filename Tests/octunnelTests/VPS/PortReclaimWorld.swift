import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

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
    /// With `appForward`: the VPS port of a second forward (`home up -R`), to OpenCode's port too.
    let appRemotePort: Int?
    /// Where the home and the laptop connect: sshd, or the relay in front of it.
    let target: String
    private var tunnel: RunningProcess?
    /// With `appForward`, once `startPhone` ran: a second phone, on the laptop's port of the app's forward.
    private(set) var appPhone: RunningProcess?
    private(set) var localPort = 0

    private init(net: NetworkNamespacePair, laptop: NetworkNamespaceLink, relay: Relay?, appForward: Bool) throws {
        self.net = net
        self.laptop = laptop
        backend = try OpenCodeStandIn(launcher: net.exec(.client))
        fixture = try TunnelFixture(
            sshdAddress: relay == nil ? net.serverAddress : "127.0.0.1", sshdLauncher: net.exec(.server))
        let relayPort = freePort()
        do {
            self.relay =
                relay == .sslh
                ? try SSLHRelay(
                    address: net.serverAddress, target: "127.0.0.1:\(fixture.sshd.port)", launcher: net.exec(.server))
                : nil
            tcpRelay =
                relay == .tcp
                ? try Self.startTCPRelay(
                    address: net.serverAddress, port: relayPort, sshdPort: fixture.sshd.port,
                    launcher: net.exec(.server)) : nil
        } catch {
            backend.stop()
            fixture.sshd.stop(hard: true)
            throw error
        }
        target =
            self.relay?.target(user: "root")
            ?? (tcpRelay == nil ? fixture.target : "root@\(net.serverAddress):\(relayPort)")
        homeKey = try HomeKey(fixture: fixture)
        remotePort = freePort()
        appRemotePort = appForward ? freePort() : nil
        try homeKey.authorize(remotePort: remotePort, also: appRemotePort.map { [$0] } ?? [])
    }

    /// scripts/lib/delay-relay.py with no delay on `address:port`, to sshd on the VPS's loopback.
    private static func startTCPRelay(
        address: String, port: Int, sshdPort: Int, launcher: [String]
    ) throws -> RunningProcess {
        let command =
            launcher + [
                python3, packageRoot + "/scripts/lib/delay-relay.py", address, String(port),
                "127.0.0.1", String(sshdPort), "0",
            ]
        let relay = try RunningProcess(command[0], Array(command.dropFirst()))
        guard relay.waitForLine(containing: "LISTENING", stdout: true) != nil else {
            relay.signal(SIGKILL)
            _ = relay.waitForExit(timeout: 5)
            throw HarnessError("the TCP relay did not start: \(relay.stderrText)")
        }
        return relay
    }

    /// A world made for `test`, handed to `body`, and removed after it whatever `body` did.
    static func with(
        _ test: String, relay: Relay? = nil, appForward: Bool = false, _ body: (World) async throws -> Void
    ) async throws {
        let world = try await make(test, relay: relay, appForward: appForward)
        defer { world.remove() }
        try await body(world)
    }

    static func make(_ test: String, relay: Relay? = nil, appForward: Bool = false) async throws -> World {
        let (net, laptop) = try await HomeNetworkTests.machines(test)
        do {
            return try await offPool { try World(net: net, laptop: laptop, relay: relay, appForward: appForward) }
        } catch {
            laptop.remove()
            net.remove()
            throw error
        }
    }

    func homeUp(launcher: [String]) throws -> RunningProcess {
        let extra = appRemotePort.map { ["-R", "\($0):127.0.0.1:\(backend.port)"] } ?? []
        return try homeKey.homeUp(
            remotePort: remotePort, homePort: backend.port, launcher: launcher, extra: extra, target: target)
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
        let app = appRemotePort.map { (local: freePort(), remote: $0) }
        let tunnel = try fixture.up(
            remotePort: remotePort, extra: app.map { ["-L", "\($0.local):127.0.0.1:\($0.remote)"] } ?? [],
            launcher: laptop.exec, via: target)
        self.tunnel = tunnel
        localPort = try #require(try await offPool { tunnel.forwardedPort(timeout: 30) }, "\(tunnel.stderrText)")
        if let app {
            try #require(
                try await offPool { tunnel.waitForLine(containing: "forwarding 127.0.0.1:\(app.local) ", timeout: 30) }
                    != nil,
                "\(tunnel.stderrText)")
            appPhone = try await phone(port: app.local)
        }
        return try await phone(port: localPort)
    }

    /// A phone on the laptop that starts a request to 127.0.0.1:`port` every 0.5 s (each on its
    /// own thread, 3 s timeout), once it was first served.
    private func phone(port: Int) async throws -> RunningProcess {
        let script =
            pythonGet + """
                port = int(sys.argv[1])
                def attempt(started):
                    try:
                        data = get(port, "/global/health", 3)
                        word = "ok" if data.startswith(b"HTTP/1.1 200") and b"healthy" in data else "bad"
                        print("%s %.3f %.3f" % (word, started, time.time()), flush=True)
                    except Exception as e:
                        print("fail %.3f %.3f %s" % (started, time.time(), type(e).__name__), flush=True)
                while True:
                    threading.Thread(target=attempt, args=(time.time(),), daemon=True).start()
                    time.sleep(0.5)
                """
        let command = laptop.exec + [python3, "-c", script, String(port)]
        let phone = try RunningProcess(command[0], Array(command.dropFirst()))
        guard try await offPool({ phone.firstServed(after: Date(timeIntervalSince1970: 0), timeout: 30) }) != nil else {
            phone.signal(SIGKILL)
            _ = phone.waitForExit(timeout: 5)
            throw HarnessError(
                "the phone on \(port) was never served: \(phone.stdout.suffix(5)) \(tunnel?.stderrText ?? "")")
        }
        return phone
    }

    /// A home that reboots while the phone keeps trying: the first home up listening, then
    /// `powerCutAndReboot`, then a new home up from the new address. Waits up to `timeout` s for
    /// it to say the port was taken back, and for the phone to be served after it started; says
    /// how long that took on stderr, after `label`; then for each of `alsoWaitFor` in its stderr.
    /// Everything is stopped on return.
    func rebootWithPhone(timeout: Double, label: String, alsoWaitFor: [String] = []) async throws -> RebootRun {
        let first = try homeUp(launcher: net.exec(.client))
        defer { first.signal(SIGKILL); _ = first.waitForExit(timeout: 5) }
        try #require(try await offPool { first.homeListening() } != nil, "\(first.stderrText)")
        let phone = try await startPhone()
        defer { phone.signal(SIGKILL); _ = phone.waitForExit(timeout: 5) }

        let rebooted = try await powerCutAndReboot(first)
        defer { rebooted.remove() }
        let startedAt = Date()
        let second = try homeUp(launcher: rebooted.home.exec)
        defer { second.stopGracefullyOrKill() }
        let takenBack = try await offPool { second.waitForLine(containing: "taken back", timeout: timeout) }
        let served = try await offPool { phone.firstServed(after: startedAt, timeout: timeout) }
        let appServed = try await offPool { self.appPhone?.firstServed(after: startedAt, timeout: timeout) }
        for line in alsoWaitFor { _ = try await offPool { second.waitForLine(containing: line, timeout: timeout) } }
        let run = RebootRun(
            second: second, takenBack: takenBack, took: served.map { $0.timeIntervalSince(startedAt) },
            appTook: appServed.map { $0.timeIntervalSince(startedAt) },
            phoneTail: phone.stdout.suffix(6) + (appPhone?.stdout.suffix(6) ?? []))
        FileHandle.standardError.write(
            Data(
                String(
                    format:
                        "\(label), phone every 0.5 s: the phone served %.1f s after the new home up started (%.1f s after the cut; goal 10 s)\n",
                    run.took ?? -1, served?.timeIntervalSince(rebooted.cutAt) ?? -1
                ).utf8))
        FileHandle.standardError.write(Data("\(label): home up said: \(takenBack ?? "nothing")\n".utf8))
        if let appTook = run.appTook {
            FileHandle.standardError.write(
                Data(
                    String(format: "\(label): the app's phone served %.1f s after the new home up started\n", appTook)
                        .utf8))
        }
        return run
    }

    /// A second `home up`, from a machine of its own, beside a live first one while the phone
    /// keeps trying, for `window` s from the second's start. Checks what holds behind any VPS:
    /// the phone never failed, the first kept its session, the second kept running, asked at
    /// least twice and never listened. Both are stopped on return.
    func secondHomeBesideLiveFirst(window: Double) async throws -> SecondHomeRun {
        let first = try homeUp(launcher: net.exec(.client))
        defer { first.stopGracefullyOrKill() }
        try #require(try await offPool { first.homeListening() } != nil, "\(first.stderrText)")
        let phone = try await startPhone()
        defer { phone.signal(SIGKILL); _ = phone.waitForExit(timeout: 5) }
        let other = try await offPool { try NetworkNamespaceLink(to: self.net, side: .server) }
        defer { other.remove() }
        let startedAt = Date()
        let second = try homeUp(launcher: other.exec)
        defer { second.stopGracefullyOrKill() }
        let refused = try await offPool { second.waitForLine(containing: "refused to listen", timeout: 30) }
        let rest = window - Date().timeIntervalSince(startedAt)
        if rest > 0 { try await Task.sleep(nanoseconds: UInt64(rest * 1e9)) }
        let run = SecondHomeRun(
            window: window, second: second, refused: refused,
            attempts: phone.attempts(startedIn: startedAt...Date().addingTimeInterval(-3)))
        #expect(run.attempts.count >= 10, "\(phone.stdout.suffix(10))")
        #expect(
            run.failed.isEmpty,
            "phone attempts that failed while the second home ran: \(run.failed.count) of \(run.attempts.count): \(phone.stdout.suffix(10))"
        )
        #expect(first.isRunning)
        #expect(
            !first.stderrText.contains("disconnected") && !first.stderrText.contains("connection to VPS lost"),
            "\(first.stderrText)")
        #expect(second.isRunning && second.homeListening(timeout: 0) == nil, "\(second.stderrText)")
        #expect(run.refusals.count >= 2, "\(second.stderrText)")
        return run
    }

    /// Stops everything, then deletes the namespaces.
    func remove() {
        appPhone?.signal(SIGKILL)
        _ = appPhone?.waitForExit(timeout: 5)
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
            return PhoneAttempt(
                ok: words[0] == "ok", started: Date(timeIntervalSince1970: started),
                ended: Date(timeIntervalSince1970: ended))
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

/// What `World.secondHomeBesideLiveFirst` saw: the second home up (stopped by then), its first
/// refusal, and the phone's attempts that started in the window (less its last 3 s).
struct SecondHomeRun {
    let window: Double
    let second: RunningProcess
    let refused: String?
    let attempts: [RunningProcess.PhoneAttempt]

    var failed: [RunningProcess.PhoneAttempt] { attempts.filter { !$0.ok } }
    var refusals: [String] { second.stderr.filter { $0.contains("refused to listen") } }
    var summary: String {
        "\(refusals.count) refusals in \(Int(window)) s, \(attempts.count) phone attempts, \(failed.count) failed"
    }
}

/// What `World.rebootWithPhone` saw: the new home up (stopped by then), its "taken back" line,
/// seconds from its start to the phone's first answer, and the phone's last lines.
struct RebootRun {
    let second: RunningProcess
    let takenBack: String?
    let took: Double?
    /// With an app forward: the same for the app's phone.
    let appTook: Double?
    let phoneTail: [String]
}
