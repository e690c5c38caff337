import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `tunnel up -L`: the app the agent builds beside OpenCode, carried by the same SSH session
/// (issue 36), through a real sshd.
@Suite("several forwards over one session: tunnel up -L", .ownThreads, .timeLimit(.minutes(3)))
struct MultipleForwardsTests {
    /// A server that sends back every byte inverted: a byte that reached the wrong forward's
    /// server would come back wrong.
    static func inverter() throws -> TCPTestServer { try transformer { ~$0 } }

    /// OpenCode's server (an echo), the app's (an inverter) and a sshd fixture to reach them;
    /// both servers are stopped after `body`.
    static func withServers(
        _ body: (_ echo: TCPTestServer, _ app: TCPTestServer, _ fixture: TunnelFixture) throws -> Void
    ) throws {
        let echo = try TCPTestServer.echo()
        defer { echo.stop() }
        let app = try Self.inverter()
        defer { app.stop() }
        let fixture = try TunnelFixture()
        try body(echo, app, fixture)
    }

    /// sshd's sign-ins so far, and the laptop's burst sessions (issue 56) that `status`, its
    /// `tunnel status`, counts.
    static func logins(_ fixture: TunnelFixture, _ status: [String: Any]) -> (logins: Int, bursts: Int) {
        (fixture.logins, (status["burstSessions"] as? NSNumber)?.intValue ?? -1)
    }

    /// A server that sends back every byte through `change`.
    static func transformer(_ change: @escaping @Sendable (UInt8) -> UInt8) throws -> TCPTestServer {
        try TCPTestServer { fd in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count <= 0 { break }
                guard writeAll(fd, buffer[..<count].map(change)) else { return }
            }
            shutdown(fd, Int32(SHUT_WR))
        }
    }

    @Test(
        "OpenCode's forward and an app's -L move data at once over one session, every byte checked and at its own server; status counts each"
    )
    func twoForwardsOneSession() throws {
        try Self.withServers { echo, app, fixture in
            let appPort = freePort()
            let tunnel = try fixture.up(
                remotePort: echo.port, extra: ["-L", "\(appPort):127.0.0.1:\(app.port)", "--no-health"])
            defer { tunnel.signal(SIGINT); _ = tunnel.waitForExit(timeout: 5) }
            let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
            #expect(tunnel.waitForLine(containing: "forwarding 127.0.0.1:\(appPort) ") != nil, "\(tunnel.stderrText)")

            let results = ResultBox(count: 40)
            DispatchQueue.concurrentPerform(iterations: 40) { index in
                let payload = patternBytes(256 << 10, seed: UInt64(index + 1))
                if index % 2 == 0 {
                    results.set(index, sendAndReceive(port: port, payload: payload, timeout: 60) == payload)
                } else {
                    results.set(
                        index, sendAndReceive(port: appPort, payload: payload, timeout: 60) == payload.map { ~$0 })
                }
            }
            #expect(results.all, "some connections lost, reordered or crossed bytes")
            // One session carries both forwards; 40 clients at once may also sign in a burst's second
            // session (issue 56), which status counts: no login beyond those.
            let object = try fixture.status()
            let (logins, bursts) = Self.logins(fixture, object)
            #expect(logins == 1 + bursts, "one session carries both, plus \(bursts) for bursts: \(object)")
            let forwards = try #require(object["forwards"] as? [[String: Any]], "\(object)")
            #expect(forwards.map { $0["local"] as? String } == ["127.0.0.1:\(port)", "127.0.0.1:\(appPort)"])
            #expect(forwards.map { $0["remote"] as? String } == ["127.0.0.1:\(echo.port)", "127.0.0.1:\(app.port)"])
            #expect(forwards.map { ($0["totalConnections"] as? NSNumber)?.intValue } == [20, 20], "\(object)")
            #expect(
                forwards.allSatisfy { ($0["bytesIn"] as? NSNumber)?.intValue == 20 * (256 << 10) }, "\(object)")
            #expect((object["totalConnections"] as? NSNumber)?.intValue == 40)
            #expect(tunnel.isRunning)
        }
    }

    @Test("--save keeps the -L list; the next start without -L serves it")
    func savedForwards() throws {
        try Self.withServers { echo, app, fixture in
            let (first, second) = (freePort(), freePort())
            let saving = try fixture.up(
                remotePort: echo.port,
                extra: [
                    "-L", "\(first):127.0.0.1:\(app.port)", "-L", "\(second):127.0.0.1:\(echo.port)",
                    "--no-health", "--save",
                ])
            #expect(saving.waitForLine(containing: "saved ") != nil, "\(saving.stderrText)")
            #expect(saving.waitForLine(containing: "forwarding 127.0.0.1:\(second) ") != nil, "\(saving.stderrText)")
            saving.signal(SIGINT)
            #expect(saving.waitForExit(timeout: 10) == 0)
            let shown = try fixture.run(["config", "show"])
            #expect(
                shown.stdout.contains(
                    "\"forwards\":[\"127.0.0.1:\(first):127.0.0.1:\(app.port)\",\"127.0.0.1:\(second):127.0.0.1:\(echo.port)\"]"
                ),
                "\(shown)")

            // Started again with no target and no -L: the saved list is served.
            let again = try RunningProcess(
                octunnelBinary, ["tunnel", "up", "--home", fixture.home.path, "--local-port", "0", "--no-health"])
            defer { again.signal(SIGINT); _ = again.waitForExit(timeout: 5) }
            #expect(again.waitForLine(containing: "forwarding 127.0.0.1:\(second) ") != nil, "\(again.stderrText)")
            let payload = patternBytes(64 << 10, seed: 7)
            #expect(sendAndReceive(port: first, payload: payload, timeout: 30) == payload.map { ~$0 })
            #expect(sendAndReceive(port: second, payload: payload, timeout: 30) == payload)
        }
    }

    @Test(
        "both ends octunnel, two forwards each over one session per side (-L here, -R at home): 8 clients open, fill and close 200 connections through both at once, 1 B to 256 KiB each, every byte checked at its own server; then a third forward added with --save at both ends is served by the next start of each with no forward flags"
    )
    func bothEnds() async throws {
        let opencode = try TCPTestServer.echo()
        defer { opencode.stop() }
        let app = try Self.inverter()
        defer { app.stop() }
        let fixture = try TunnelFixture()
        let (vpsOpenCode, vpsApp, laptopApp) = (freePort(), freePort(), freePort())
        let homeSide = try fixture.homeUp(
            remotePort: vpsOpenCode, homePort: opencode.port,
            extra: ["-R", "\(vpsApp):127.0.0.1:\(app.port)", "--no-health"])
        let listening = try await offPool { () -> Bool in
            homeSide.waitForLine(containing: "VPS 127.0.0.1:\(vpsOpenCode) → home") != nil
                && homeSide.waitForLine(containing: "VPS 127.0.0.1:\(vpsApp) → home 127.0.0.1:\(app.port)") != nil
        }
        try #require(listening, "\(homeSide.stderrText)")
        let laptop = try fixture.up(
            remotePort: vpsOpenCode, extra: ["-L", "\(laptopApp):127.0.0.1:\(vpsApp)", "--no-health"])
        let port = try #require(laptop.forwardedPort(), "\(laptop.stderrText)")
        let crossed = try await offPool {
            Self.churn(connections: 200, clients: 8) { index in
                index % 2 == 0 ? (port, { $0 }) : (laptopApp, { $0.map { ~$0 } })
            }
        }
        #expect(crossed.isEmpty, "connections lost, cut, reordered or crossed: \(crossed.prefix(10)) of 200")
        // One session each side, the home's and the laptop's, and the laptop's burst sessions (issue 56) as its status counts them.
        let (logins, bursts) = try await offPool { Self.logins(fixture, try fixture.status()) }
        #expect(logins == 2 + bursts, "\(bursts) for bursts: \(fixture.sshd.log)")
        let status = try await offPool { try fixture.run(["home", "status", "--json"]) }
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status)")
        let forwards = try #require(object["forwards"] as? [[String: Any]], "\(status.stdout)")
        #expect(forwards.map { $0["remote"] as? String } == ["127.0.0.1:\(vpsOpenCode)", "127.0.0.1:\(vpsApp)"])
        // 100 clients each, and the channels the laptop's pools opened ahead of need.
        #expect(forwards.allSatisfy { ($0["totalConnections"] as? NSNumber)?.intValue ?? 0 >= 100 }, "\(status.stdout)")
        #expect(laptop.isRunning && homeSide.isRunning, "\(laptop.stderrText)\n\(homeSide.stderrText)")
        laptop.stopGracefullyOrKill()
        homeSide.stopGracefullyOrKill()

        // A third forward (a server at home that adds 1 to each byte), added with --save at both ends.
        let third = try Self.transformer { $0 &+ 1 }
        defer { third.stop() }
        let (vpsThird, laptopThird) = (freePort(), freePort())
        let savingHome = try fixture.homeUp(
            remotePort: vpsOpenCode, homePort: opencode.port,
            extra: [
                "-R", "\(vpsApp):127.0.0.1:\(app.port)", "-R", "\(vpsThird):127.0.0.1:\(third.port)", "--no-health",
                "--save",
            ])
        try #require(
            try await offPool { savingHome.waitForLine(containing: "VPS 127.0.0.1:\(vpsThird) → home") } != nil,
            "\(savingHome.stderrText)")
        savingHome.stopGracefullyOrKill()
        let savingLaptop = try fixture.up(
            remotePort: vpsOpenCode,
            extra: [
                "-L", "\(laptopApp):127.0.0.1:\(vpsApp)", "-L", "\(laptopThird):127.0.0.1:\(vpsThird)",
                "--no-health", "--save",
            ])
        try #require(
            try await offPool { savingLaptop.waitForLine(containing: "forwarding 127.0.0.1:\(laptopThird) ") } != nil,
            "\(savingLaptop.stderrText)")
        savingLaptop.stopGracefullyOrKill()

        // The next starts name no forward, no port, not even the VPS: every forward comes from config.json.
        let home = try RunningProcess(octunnelBinary, ["home", "up", "--home", fixture.home.path, "--no-health"])
        defer { home.stopGracefullyOrKill() }
        let homeListens = try await offPool { () -> Bool in
            [vpsOpenCode, vpsApp, vpsThird].allSatisfy {
                home.waitForLine(containing: "VPS 127.0.0.1:\($0) → home") != nil
            }
        }
        try #require(homeListens, "\(home.stderrText)")
        let again = try RunningProcess(
            octunnelBinary, ["tunnel", "up", "--home", fixture.home.path, "--local-port", "0", "--no-health"])
        defer { again.stopGracefullyOrKill() }
        let againPort = try #require(try await offPool { again.forwardedPort() }, "\(again.stderrText)")
        try #require(
            try await offPool { again.waitForLine(containing: "forwarding 127.0.0.1:\(laptopThird) ") } != nil,
            "\(again.stderrText)")
        let recrossed = try await offPool {
            Self.churn(connections: 30, clients: 3) { index in
                switch index % 3 {
                case 0: return (againPort, { $0 })
                case 1: return (laptopApp, { $0.map { ~$0 } })
                default: return (laptopThird, { $0.map { $0 &+ 1 } })
                }
            }
        }
        #expect(recrossed.isEmpty, "after the bare restarts: \(recrossed) of 30")
    }

    /// `clients` threads open `connections` connections between them, one after another each:
    /// connection `index` goes to `route(index).port`, sends 1 B to 256 KiB (picked from the
    /// index) and must read back exactly `route(index).expected(payload)` before it closes.
    /// Returns the indexes that did not.
    static func churn(
        connections: Int, clients: Int,
        route: @escaping @Sendable (Int) -> (port: Int, expected: @Sendable ([UInt8]) -> [UInt8])
    ) -> [Int] {
        let results = ResultBox(count: connections)
        let sizes = [1, 17, 1 << 10, 4 << 10, 64 << 10, 256 << 10, 100_003]
        DispatchQueue.concurrentPerform(iterations: clients) { client in
            for index in stride(from: client, to: connections, by: clients) {
                let payload = patternBytes(
                    sizes[(index * 7 + index / clients) % sizes.count], seed: UInt64(index + 100))
                let (port, expected) = route(index)
                results.set(index, sendAndReceive(port: port, payload: payload, timeout: 60) == expected(payload))
            }
        }
        return (0..<connections).filter { !results.value($0) }
    }

    @Test(
        "a key line that allows one of two listen ports: home up serves that one and names the other's refusal; the app's port alone allowed, the OpenCode one refused, the same"
    )
    func oneListenForbidden() async throws {
        let fixture = try TunnelFixture(authorize: false)
        let echo = try TCPTestServer.echo()
        defer { echo.stop() }
        let (allowed, forbidden) = (freePort(), freePort())
        try writeText(
            listenAuthorizedKeysLine(fixture.key, listens: [HostPort(host: "127.0.0.1", port: allowed)]) + "\n",
            to: fixture.sshd.authorizedKeysPath)
        for (opencodePort, appPort) in [(allowed, forbidden), (forbidden, allowed)] {
            let homeSide = try fixture.homeUp(
                remotePort: opencodePort, homePort: echo.port,
                extra: ["-R", "\(appPort):127.0.0.1:\(echo.port)", "--no-health"])
            defer { homeSide.stopGracefullyOrKill() }
            let said = try await offPool { () -> (String?, String?) in
                (
                    homeSide.waitForLine(containing: "VPS 127.0.0.1:\(allowed) → home"),
                    homeSide.waitForLine(containing: "forbids this key to listen on 127.0.0.1:\(forbidden)")
                )
            }
            #expect(said.0 != nil && said.1 != nil, "\(homeSide.stderrText)")
            #expect(try await offPool { roundTrip(port: allowed, seed: 3) }, "the allowed forward serves")
            #expect(homeSide.isRunning, "one refusal took down the other forward: \(homeSide.stderrText)")
        }
    }

    /// `octunnel ROLE up` to `fixture`'s sshd with `given`: exit 64 and one line, nothing connected.
    static func expectRefused(_ role: String, _ given: [String], _ fixture: TunnelFixture) throws {
        let result = try run(
            octunnelBinary,
            [
                role, "up", "--home", fixture.home.path, fixture.target, "--no-health",
                "--connect-timeout", "10",
            ] + given)
        #expect(result.status == 64, "\(given): \(result)")
        let lines = result.stderr.split(separator: "\n").filter {
            !$0.isEmpty && !$0.hasPrefix("Usage") && !$0.contains("--help")
        }
        #expect(lines.count == 1, "\(given): \(result.stderr)")
        #expect(!fixture.sshd.log.contains("Accepted publickey"), "nothing may connect: \(fixture.sshd.log)")
    }

    @Test(
        "bad -R input: one line and exit 64, nothing started",
        arguments: [
            ["-R", "18081"], ["-R", "0:127.0.0.1:3000"], ["-R", "18081:127.0.0.1:0"],
            ["-R", "PORT:127.0.0.1:1", "-R", "PORT:127.0.0.1:2"],
            ["-R", "0.0.0.0:18081:127.0.0.1:3000"], ["--remote-port", "PORT", "-R", "PORT:127.0.0.1:3000"],
            ["-R", "18081:h;id:3000"],
        ])
    func badRemoteForwards(arguments: [String]) throws {
        let fixture = try TunnelFixture()
        let port = String(freePort())
        let given = arguments.map { $0.replacingOccurrences(of: "PORT", with: port) }
        try Self.expectRefused("home", given, fixture)
    }

    @Test(
        "bad -L input: one line and exit 64, nothing started",
        arguments: [
            ["-L", "3000"], ["-L", "3000:127.0.0.1:0"], ["-L", "LOCAL:127.0.0.1:3000"],
            ["-L", "PORT:127.0.0.1:1", "-L", "PORT:127.0.0.1:2"],
            ["-L", "0.0.0.0:PORT:127.0.0.1:3000"],
            ["--local-port", "PORT", "-L", "PORT:127.0.0.1:3000"],
        ])
    func badForwards(arguments: [String]) throws {
        let fixture = try TunnelFixture()
        let port = String(freePort())
        let given = arguments.map {
            $0.replacingOccurrences(of: "PORT", with: port).replacingOccurrences(of: "LOCAL", with: "x")
        }
        try Self.expectRefused("tunnel", given, fixture)
    }
}

/// `tunnel check` walks each forward beside OpenCode's on its own (issue 36).
@Suite("tunnel check with several forwards: each proven on its own", .ownThreads, .timeLimit(.minutes(3)))
struct CheckEachForwardTests {
    @Test(
        "tunnel up -L: the health test runs on OpenCode's forward only, once, and passes; the app's forward is never taken for OpenCode"
    )
    func healthOnOpenCodeOnly() async throws {
        let opencode = try OpenCodeStandIn()
        let app = try TCPTestServer.echo()
        defer { app.stop() }
        let fixture = try TunnelFixture()
        let (homeSide, vpsOpenCode) = try await fixture.homeUpListening(homePort: opencode.port, extra: ["--no-health"])
        defer { homeSide.stopGracefullyOrKill() }
        let laptop = try fixture.up(
            remotePort: vpsOpenCode, extra: ["-L", "\(freePort()):127.0.0.1:\(app.port)", "--json"])
        defer { laptop.stopGracefullyOrKill() }
        let health = try await offPool {
            laptop.waitForLine(containing: "\"event\":\"health\"", stdout: true, timeout: 30)
        }
        #expect(health?.contains("\"healthy\":true") == true, "\(laptop.stdout) \(laptop.stderrText)")
        let forwarding = laptop.stdout.filter { $0.contains("\"event\":\"forwarding\"") }
        #expect(
            forwarding.count == 2 && forwarding.filter { $0.contains("\"openCode\":true") }.count == 1, "\(forwarding)")
        // Given time for a second test, none came: it is OpenCode's forward's alone.
        #expect(
            laptop.waitForLine(containing: "\"event\":\"health\"", stdout: true, after: laptop.stdout.count, timeout: 2)
                == nil,
            "\(laptop.stdout)")
        #expect(laptop.stdout.filter { $0.contains("\"event\":\"health\"") }.count == 1, "\(laptop.stdout)")
    }

    @Test(
        "the app stopped at home: check names its forward and 'nothing listens at home on 3000' while OpenCode's stays ✓; no -R at all: nothing listens on the VPS port; the app up: every layer ✓"
    )
    func appStoppedAtHome() async throws {
        let opencode = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let (vpsOpenCode, vpsApp, unforwarded) = (freePort(), freePort(), freePort())
        let appHome = freePort()
        let homeSide = try fixture.homeUp(
            remotePort: vpsOpenCode, homePort: opencode.port,
            extra: ["-R", "\(vpsApp):127.0.0.1:\(appHome)", "--no-health"])
        defer { homeSide.stopGracefullyOrKill() }
        try #require(
            try await offPool { homeSide.waitForLine(containing: "VPS 127.0.0.1:\(vpsApp) → home") } != nil,
            "\(homeSide.stderrText)")

        let check = try await offPool {
            try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(vpsOpenCode), "--connect-timeout", "10",
                "-L", "3000:127.0.0.1:\(vpsApp)", "-L", "3001:127.0.0.1:\(unforwarded)",
            ])
        }
        #expect(check.status == 69, "\(check.stderr)")
        #expect(check.stderr.contains("✓ health"), "OpenCode's forward stays ✓: \(check.stderr)")
        #expect(
            check.stderr.contains("✗ forward 127.0.0.1:\(vpsApp)")
                && check.stderr.contains("nothing listens at home on \(appHome)"),
            "\(check.stderr)")
        #expect(
            check.stderr.contains("✗ forward 127.0.0.1:\(unforwarded)")
                && check.stderr.contains("nothing listens on VPS 127.0.0.1:\(unforwarded)"),
            "\(check.stderr)")

        // An app answering where the VPS sends the forward: it answers, and every layer is ✓.
        let app = try TCPTestServer { fd in
            _ = readAll(fd, limit: 16)
            _ = writeAll(fd, Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8))
        }
        defer { app.stop() }
        let relay = try await offPool {
            try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(vpsOpenCode), "--connect-timeout", "10",
                "-L", "3000:127.0.0.1:\(app.port)",
            ])
        }
        #expect(relay.status == 0, "\(relay.stderr)")
        #expect(
            relay.stderr.contains("✓ forward 127.0.0.1:\(app.port)") && relay.stderr.contains("answered: HTTP 200"),
            "\(relay.stderr)")
    }
}
