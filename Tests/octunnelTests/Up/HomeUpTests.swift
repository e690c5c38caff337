import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

extension TunnelFixture {
    /// Starts `home up` towards the fixture's sshd (the "VPS"): it asks sshd to listen on
    /// `remotePort` and carries what arrives to `homePort` on 127.0.0.1.
    func homeUp(remotePort: Int, homePort: Int, extra: [String] = [], launcher: [String] = []) throws -> RunningProcess
    {
        let command =
            launcher + [
                octunnelBinary, "home", "up", "--home", home.path, target, "--remote-port", String(remotePort),
                "--home-port", String(homePort), "--connect-timeout", "10",
            ] + extra
        return try RunningProcess(command[0], Array(command.dropFirst()))
    }

    /// `home up` to `homePort` with `extra` on a free VPS port, once the VPS listens there: the
    /// process (stopped here if it never does) and the port.
    func homeUpListening(
        homePort: Int, extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws
        -> (home: RunningProcess, remotePort: Int)
    {
        let remotePort = freePort()
        let home = try homeUp(remotePort: remotePort, homePort: homePort, extra: extra)
        do {
            try #require(
                try await offPool { home.homeListening() } != nil, "\(home.stderrText)", sourceLocation: sourceLocation)
        } catch {
            home.stopGracefullyOrKill()
            throw error
        }
        return (home, remotePort)
    }
}

extension RunningProcess {
    /// Waits for `home up`'s "VPS 127.0.0.1:PORT → home …" line.
    func homeListening(timeout: Double = 20) -> String? { waitForLine(containing: " → home ", timeout: timeout) }
}

/// The whole path as users run it: laptop `tunnel up` → VPS (a real sshd) → home `home up` →
/// OpenCode (the stand-in) or a byte-checking server, both ends octunnel.
@Suite("home up: the home side against a real sshd", .ownThreads, .timeLimit(.minutes(4)))
struct HomeUpTests {
    @Test("tunnel up → VPS sshd → home up → stand-in: both health tests pass, the laptop's check passes")
    func endToEndHealth() async throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let homeSide = try fixture.homeUp(remotePort: remotePort, homePort: backend.port)
        defer { homeSide.stopGracefullyOrKill() }
        let listening = try await offPool { homeSide.homeListening() }
        try #require(listening != nil, "\(homeSide.stderrText)")
        #expect(listening == "VPS 127.0.0.1:\(remotePort) → home 127.0.0.1:\(backend.port)")
        #expect(homeSide.stderrText.contains("home health ✓ OpenCode"))
        #expect(homeSide.stderrText.contains("authenticated as"))
        let laptop = try fixture.up(remotePort: remotePort)
        defer { laptop.stopGracefullyOrKill() }
        let health = try await offPool { laptop.waitForLine(containing: "health ", timeout: 30) }
        #expect(health?.hasPrefix("health ✓ OpenCode") == true, "\(laptop.stderrText)\n\(homeSide.stderrText)")
        let check = try await offPool {
            try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(remotePort), "--connect-timeout", "10",
            ])
        }
        #expect(check.status == 0, "\(check.stderr)")
        #expect(homeSide.isRunning && laptop.isRunning)

        // `home status` asks the running home up through its own socket.
        let status = try await offPool { try fixture.run(["home", "status", "--json"]) }
        #expect(status.status == 0, "\(status)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status)")
        #expect(object["state"] as? String == "connected")
        #expect(object["hostKey"] as? String == fixture.sshd.hostKeyFingerprint)
        #expect(object["local"] as? String == "127.0.0.1:\(backend.port)")
        #expect(object["remote"] as? String == "127.0.0.1:\(remotePort)")
        #expect((object["totalConnections"] as? Int ?? 0) >= 1, "the laptop's health test came through")
        #expect((object["health"] as? [String: Any])?["ok"] as? Bool == true)
    }

    @Test("200 concurrent connections through both ends move 256 KiB each way, and a 256 MiB download arrives intact")
    func bytesThroughBothEnds() async throws {
        let downloadSize = 256 << 20
        // 'D' asks for the download; anything else is echoed.
        let server = try TCPTestServer { fd in
            var first: UInt8 = 0
            guard recv(fd, &first, 1, 0) == 1 else { return }
            if first == UInt8(ascii: "D") {
                writeAll(fd, patternBytes(downloadSize, seed: 256))
                shutdown(fd, Int32(SHUT_WR))
                _ = readAll(fd)
            } else {
                writeAll(fd, [first])
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = recv(fd, &buffer, buffer.count, 0)
                    if count <= 0 { break }
                    writeAll(fd, Array(buffer[..<count]))
                }
                shutdown(fd, Int32(SHUT_WR))
            }
        }
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let homeSide = try fixture.homeUp(
            remotePort: remotePort, homePort: server.port, extra: ["--no-health", "--verbose"])
        defer { homeSide.stopGracefullyOrKill() }
        try #require(try await offPool { homeSide.homeListening() } != nil, "\(homeSide.stderrText)")
        let laptop = try fixture.up(remotePort: remotePort, extra: ["--no-health", "--verbose"])
        defer { laptop.stopGracefullyOrKill() }
        let port = try #require(try await offPool { laptop.forwardedPort() }, "\(laptop.stderrText)")

        let failures = FailureLog()
        let (echoed, downloaded) = try await offPool { () -> (Bool, Bool) in
            let results = ResultBox(count: 200)
            DispatchQueue.concurrentPerform(iterations: 200) { index in
                let payload = patternBytes(256 * 1024, seed: UInt64(index + 1000))
                guard let answer = sendAndReceive(port: port, payload: payload, timeout: 120) else {
                    return failures.add("connection \(index): connect failed: \(String(cString: strerror(errno)))")
                }
                results.set(index, answer == payload)
                if answer != payload {
                    failures.add("connection \(index): \(mismatchDescription(got: answer, expected: payload))")
                }
            }
            let fd = connectLoopback(port)
            guard fd >= 0 else { return (results.all, false) }
            defer { close(fd) }
            setSocketTimeout(fd, seconds: 120)
            writeAll(fd, [UInt8(ascii: "D")])
            let received = readAll(fd)
            return (results.all, received.count == downloadSize && received == patternBytes(downloadSize, seed: 256))
        }
        #expect(
            echoed,
            """
            some of the 200 connections lost or reordered bytes: \(failures.text)
            laptop: \(laptop.stderr.filter { !$0.contains("opened") && !$0.contains("closed (") }.suffix(30).joined(separator: "\n"))
            home: \(homeSide.stderr.filter { !$0.contains("opened") && !$0.contains("closed (") }.suffix(30).joined(separator: "\n"))
            """)
        #expect(downloaded, "the 256 MiB download was not intact")
        #expect(homeSide.isRunning && laptop.isRunning)
    }

    @Test(
        "OpenCode stopped at home: forwarded connections get home up's 502, the laptop's check names the home port; started again it passes with no restart"
    )
    func openCodeStoppedAtHome() async throws {
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let homePort = freePort()
        let homeSide = try fixture.homeUp(remotePort: remotePort, homePort: homePort)
        defer { homeSide.stopGracefullyOrKill() }
        try #require(try await offPool { homeSide.homeListening() } != nil, "\(homeSide.stderrText)")
        // Nothing listened on the home port when it started: it said so before listening.
        #expect(
            homeSide.stderrText.contains(
                "OpenCode is not running on this machine: nothing listens on 127.0.0.1:\(homePort)"))
        let checkArguments = [
            "tunnel", "check", fixture.target, "--remote-port", String(remotePort), "--connect-timeout", "10",
        ]
        let down = try await offPool { try fixture.run(checkArguments) }
        #expect(down.status == 69)
        #expect(
            down.stderr.contains(
                "the home machine is reachable but OpenCode is not running there (127.0.0.1:\(homePort))"),
            "\(down.stderr)")
        #expect(down.stderr.contains("opencode serve --port \(homePort)"))
        #expect(!down.stderr.contains("reverse tunnel is down"))

        // The raw answer through the VPS: a 502 whose JSON body names the layer and the fix.
        let laptop = try fixture.up(remotePort: remotePort, extra: ["--no-health"])
        defer { laptop.stopGracefullyOrKill() }
        let port = try #require(try await offPool { laptop.forwardedPort() }, "\(laptop.stderrText)")
        let answer = try await offPool { httpGet(port: port, path: "/global/health") } ?? ""
        #expect(answer.hasPrefix("HTTP/1.1 502"), "\(answer)")
        #expect(
            answer.contains(#""octunnel":"home""#)
                && answer.contains(#""fix":"start `opencode serve --port \#(homePort)` there""#))

        let backend = try OpenCodeStandIn(port: homePort)
        defer { backend.stop() }
        let up = try await offPool { try fixture.run(checkArguments) }
        #expect(up.status == 0, "\(up.stderr)")
        #expect(homeSide.isRunning)
    }

    @Test("--no-http-errors closes a connection the home port cannot take, without an answer")
    func noHTTPErrors() async throws {
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let homeSide = try fixture.homeUp(
            remotePort: remotePort, homePort: freePort(), extra: ["--no-http-errors", "--no-health"])
        defer { homeSide.stopGracefullyOrKill() }
        try #require(try await offPool { homeSide.homeListening() } != nil, "\(homeSide.stderrText)")
        let laptop = try fixture.up(remotePort: remotePort, extra: ["--no-health"])
        defer { laptop.stopGracefullyOrKill() }
        let port = try #require(try await offPool { laptop.forwardedPort() }, "\(laptop.stderrText)")
        let answer = try await offPool { httpGet(port: port, path: "/global/health") }
        #expect(answer == "")
    }

    @Test(
        "idle it uses no CPU; Ctrl-C: home up exits 0 (its goodbye budget is 1.2 s), the VPS port is free at once, and the laptop's check says the home side is down (69)"
    )
    func ctrlC() async throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let homeSide = try fixture.homeUp(remotePort: remotePort, homePort: backend.port, extra: ["--no-health"])
        defer { homeSide.stopGracefullyOrKill() }
        try #require(try await offPool { homeSide.homeListening() } != nil, "\(homeSide.stderrText)")
        #expect(connectLoopback(remotePort).closing() >= 0, "the VPS does not listen on \(remotePort)")
        // Idle while listening: it sleeps in poll (keepalive 15 s), no CPU.
        let before = homeSide.cpuSeconds
        #expect(try await offPool { homeSide.waitForExit(timeout: 5) } == nil)
        let used = homeSide.cpuSeconds - before
        #expect(used < 0.05, "idle home up used \(used) s of CPU in 5 s")
        let stopAt = Date()
        homeSide.signal(SIGINT)
        let status = try await offPool { homeSide.waitForExit(timeout: 5) }
        let took = Date().timeIntervalSince(stopAt)
        #expect(status == 0)
        // The goodbye's budget is 1.2 s; 10 s only guards against a hang on a loaded machine.
        print("home up stopped \(String(format: "%.2f", took)) s after SIGINT")
        #expect(took < 10, "took \(took) s")
        // Free at once: no connection accepted on the VPS port right after the exit.
        #expect(connectLoopback(remotePort).closing() < 0, "the VPS still listens on \(remotePort)")
        let check = try await offPool {
            try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(remotePort), "--connect-timeout", "10",
            ])
        }
        #expect(check.status == 69)
        #expect(check.stderr.contains("reverse tunnel is down"), "\(check.stderr)")
    }

    @Test("a VPS key that may only open forwards (permitopen, no listening): home up exits 77 with the --listen line")
    func listenForbidden() async throws {
        let fixture = try TunnelFixture(authorize: false)
        let remotePort = freePort()
        try writeText(
            "restrict,permitopen=\"127.0.0.1:\(remotePort)\",command=\"/bin/false\" \(fixture.key.line)\n",
            to: fixture.sshd.authorizedKeysPath)
        let result = try await offPool {
            try run(
                octunnelBinary,
                [
                    "home", "up", "--home", fixture.home.path, fixture.target, "--remote-port", String(remotePort),
                    "--no-health", "--connect-timeout", "10",
                ])
        }
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("forbids this key to listen on 127.0.0.1:\(remotePort)"))
        #expect(
            result.stderr.contains(listenAuthorizedKeysLine(fixture.key, remotePort: remotePort)), "\(result.stderr)")
    }

    @Test("pubkey --restrict --listen: sshd accepts the line, the key can listen on that port and run no command")
    func listenLine() async throws {
        let fixture = try TunnelFixture(authorize: false)
        let remotePort = freePort()
        let printed = try fixture.run(["pubkey", "--restrict", "--listen", "--remote-port", String(remotePort)])
        #expect(printed.status == 0)
        let line = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let program = OctunnelKeyLine.forcedCommand(
            role: .home, ends: [HostPort(host: "127.0.0.1", port: remotePort)],
            tag: OctunnelKeyLine.tag(for: fixture.key), added: OctunnelKeyLine.today())
        #expect(
            line
                == "restrict,port-forwarding,permitlisten=\"127.0.0.1:\(remotePort)\",permitopen=\"127.0.0.1:1\",command=\"\(program)\" \(fixture.key.line)"
        )
        try writeText(line + "\n", to: fixture.sshd.authorizedKeysPath)
        let echo = try TCPTestServer.echo()
        let homeSide = try fixture.homeUp(remotePort: remotePort, homePort: echo.port, extra: ["--no-health"])
        defer { homeSide.stopGracefullyOrKill() }
        try #require(try await offPool { homeSide.homeListening() } != nil, "\(homeSide.stderrText)")
        #expect(try await offPool { roundTrip(port: remotePort, seed: 11) })
        // Another port is refused by permitlisten: exit 77 too.
        let other = try await offPool {
            try run(
                octunnelBinary,
                [
                    "home", "up", "--home", fixture.home.path, fixture.target, "--remote-port", String(freePort()),
                    "--no-health", "--connect-timeout", "10",
                ])
        }
        #expect(other.status == 77, "\(other.stderr)")
        let shell = try run(
            "/usr/bin/ssh",
            [
                "-i", fixture.home.file("id_ed25519"), "-o", "UserKnownHostsFile=\(fixture.knownHosts)",
                "-o", "BatchMode=yes", "-p", String(fixture.sshd.port), "root@127.0.0.1", "echo", "RAN-A-COMMAND",
            ])
        #expect(!shell.stdout.contains("RAN-A-COMMAND"))
        // The forced command knows two verbs and nothing else: the command is refused, not run.
        #expect(
            shell.stdout.hasPrefix("octunnel-reclaim v=1 result=refused port=127.0.0.1:\(remotePort)"),
            "exit \(shell.status): \(shell.stdout) \(shell.stderr)\n\(fixture.sshd.log.suffix(1500))")
        // Nor can it open a forward of its own (permitopen on a port nothing uses): the laptop side is refused, 77.
        let open = try await offPool {
            try run(
                octunnelBinary,
                [
                    "tunnel", "check", "--home", fixture.home.path, fixture.target, "--remote-port", String(echo.port),
                    "--connect-timeout", "10",
                ])
        }
        #expect(open.status == 77, "\(open.stderr)")
    }

    @Test(
        "a VPS port held by something else: home up names ClientAliveInterval, keeps retrying, and listens once the port is free"
    )
    func busyPortIsRetried() async throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture()
        var holder: TCPTestServer? = try TCPTestServer.echo()
        let remotePort = holder!.port
        let homeSide = try fixture.homeUp(remotePort: remotePort, homePort: echo.port, extra: ["--no-health"])
        defer { homeSide.stopGracefullyOrKill() }
        let refused = try await offPool { homeSide.waitForLine(containing: "refused to listen", timeout: 20) }
        #expect(refused?.contains("ClientAliveInterval 15") == true, "\(homeSide.stderrText)")
        // Waiting to ask again costs nothing: it sleeps in poll between attempts.
        let before = homeSide.cpuSeconds
        #expect(try await offPool { homeSide.waitForExit(timeout: 3) } == nil)
        #expect(
            homeSide.cpuSeconds - before < 0.1, "used \(homeSide.cpuSeconds - before) s of CPU in 3 s while retrying")
        holder?.stop()
        holder = nil
        // The backoff is 1 s doubling to 5 s: the next attempt finds the port free.
        let listening = try await offPool { homeSide.homeListening(timeout: 20) }
        #expect(listening != nil, "\(homeSide.stderrText)")
        #expect(homeSide.isRunning)
    }
}

@Suite("home up: settings and renderings", .ownThreads)
struct HomeUpSettingsTests {
    @Test("reverse-command renders `octunnel home up …` for the shell, systemd and launchd")
    func reverseCommandHomeFormats() throws {
        let home = try TempDirectory("octunnel-home")
        func render(_ format: String) throws -> ProcessResult {
            try run(
                octunnelBinary,
                [
                    "tunnel", "reverse-command", "me@vps.example.com:2222", "--remote-port", "18081",
                    "--home-port", "4097", "--format", format, "--home", home.path,
                ])
        }
        let shell = try render("home")
        #expect(shell.status == 0)
        #expect(shell.stdout == "octunnel home up me@vps.example.com:2222 --remote-port 18081 --home-port 4097\n")
        let unit = try render("home-systemd")
        let exec = try #require(unit.stdout.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        #expect(
            exec.hasPrefix("ExecStart=/")
                && exec.hasSuffix("/octunnel home up me@vps.example.com:2222 --remote-port 18081 --home-port 4097"))
        #expect(!unit.stdout.contains("/usr/bin/ssh"))
        let plist = try render("home-launchd")
        #expect(
            plist.stdout.contains(
                "<string>home</string>\n        <string>up</string>\n        <string>me@vps.example.com:2222</string>"))
        #expect(try render("ssh").stdout.hasPrefix("ssh -N"))
    }

    @Test(
        "home up --save stores the home role next to the tunnel's; home up --profile NAME runs from it with no target (as the service unit does)"
    )
    func savedHomeSettings() async throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let first = try fixture.homeUp(
            remotePort: remotePort, homePort: echo.port, extra: ["--save", "--profile", "work", "--no-health"])
        try #require(try await offPool { first.homeListening() } != nil, "\(first.stderrText)")
        first.stopGracefullyOrKill()
        let config = try readText(fixture.home.file("config.json"))
        #expect(config.contains("\"home\""), "\(config)")
        #expect(config.contains("\(remotePort)") && config.contains("\(echo.port)"))
        // What `service install home --profile work` runs: no target, no ports.
        let saved = try RunningProcess(
            octunnelBinary, ["home", "up", "--home", fixture.home.path, "--profile", "work", "--no-health"])
        defer { saved.stopGracefullyOrKill() }
        let listening = try await offPool { saved.homeListening() }
        #expect(listening == "VPS 127.0.0.1:\(remotePort) → home 127.0.0.1:\(echo.port)", "\(saved.stderrText)")
        #expect(try await offPool { roundTrip(port: remotePort, seed: 5) })
        // The laptop role of the same profile is untouched, and a profile with no home settings says how to save one.
        let none = try run(octunnelBinary, ["home", "up", "--home", fixture.home.path, "--profile", "other"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("octunnel home up TARGET --save --profile other"), "\(none.stderr)")
    }
}

private extension Int32 {
    /// Closes this descriptor if it is one; returns it (for "did connect succeed" checks).
    func closing() -> Int32 {
        if self >= 0 { close(self) }
        return self
    }
}

/// What went wrong on which connection, collected from many threads for one message.
final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return lines.prefix(20).joined(separator: "\n") }
}
