import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("tunnel check, the health test and the reverse command", .ownThreads, .timeLimit(.minutes(3)))
struct CheckAndHealthTests {
    private func check(
        _ fixture: TunnelFixture, remotePort: Int, extra: [String] = [], environment: [String: String]? = nil
    ) throws -> ProcessResult {
        let given = (environment ?? [:]).mapValues { Optional($0) }
        return try tunnelCheck(
            fixture, remotePort: remotePort, extra: extra,
            environment: given.merging(["OPENCODE_SERVER_PASSWORD": nil]) { kept, _ in kept })
    }

    /// `tunnel check` of `backend` through a fixture of its own.
    private func check(_ backend: OpenCodeStandIn) throws -> ProcessResult {
        try check(try TunnelFixture(), remotePort: backend.port)
    }

    @Test("every layer passes against OpenCode 1.x, and --json has every stage")
    func happyPath() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let text = try check(fixture, remotePort: backend.port)
        #expect(text.status == 0, "\(text.stderr)")
        for stage in ["resolve", "tcp", "handshake", "host key", "authentication", "forward", "health", "events"] {
            #expect(text.stderr.contains("✓ \(stage) ("), "missing \(stage): \(text.stderr)")
        }
        #expect(text.stderr.contains("OpenCode 1.0.0 (API 1) healthy through 127.0.0.1"))
        let json = try check(fixture, remotePort: backend.port, extra: ["--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == true)
        #expect((object["stages"] as? [[String: Any]])?.count == 8)
    }

    @Test("nothing behind the VPS: exit 69 with the reverse-tunnel command as the fix")
    func nothingBehind() throws {
        let fixture = try TunnelFixture()
        let port = freePort()
        let result = try check(fixture, remotePort: port)
        #expect(result.status == 69)
        #expect(result.stderr.contains("✗ forward"))
        #expect(
            result.stderr.contains(
                "ssh -N -o ExitOnForwardFailure=yes -o ServerAliveInterval=30 -o ServerAliveCountMax=3 -R 127.0.0.1:\(port):127.0.0.1:4096 -p \(fixture.sshd.port) root@127.0.0.1"
            ))
    }

    @Test(
        "a forward the VPS forbids (permitopen elsewhere, AllowTcpForwarding no): exit 77 naming the refusal, not 'nothing listens'"
    )
    func forwardForbidden() throws {
        let backend = try OpenCodeStandIn()
        let restricted = try TunnelFixture(restricted: freePort())
        let result = try check(restricted, remotePort: backend.port)
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("✗ forward"))
        #expect(result.stderr.contains("the VPS refused to forward to 127.0.0.1:\(backend.port)"))
        #expect(!result.stderr.contains("nothing listens"))

        let noForwarding = try TunnelFixture(sshdConfig: "AllowTcpForwarding no")
        let json = try check(noForwarding, remotePort: backend.port, extra: ["--json"])
        #expect(json.status == 77, "\(json.stderr)")
        #expect(json.stdout.contains("refused to forward"))
    }

    @Test("nothing on the SSH port: exit 69 at the tcp layer")
    func nothingOnSSHPort() throws {
        let fixture = try TunnelFixture()
        let port = freePort()
        let result = try run(
            octunnelBinary, ["tunnel", "check", "--home", fixture.home.path, "root@127.0.0.1:\(port)"])
        #expect(result.status == 69)
        #expect(result.stderr.contains("✗ tcp"))
        #expect(result.stderr.contains("refused the connection"))
    }

    @Test("a changed host key: exit 76 at the host key layer; an unknown one with --no-trust-new: 76")
    func hostKeyLayer() throws {
        let fixture = try TunnelFixture()
        let unknown = try check(fixture, remotePort: 9, extra: ["--no-trust-new"])
        #expect(unknown.status == 76)
        #expect(unknown.stderr.contains("--no-trust-new"))
        // Trust some other key for this host:port.
        let other = SSHPublicKey(ed25519: [UInt8](repeating: 7, count: 32), comment: "")
        try KnownHostsStore(path: fixture.knownHosts).record(host: "127.0.0.1", port: fixture.sshd.port, key: other)
        let changed = try check(fixture, remotePort: 9)
        #expect(changed.status == 76)
        #expect(changed.stderr.contains("✗ host key"))
        #expect(changed.stderr.contains("octunnel trust reset 127.0.0.1:\(fixture.sshd.port)"))
    }

    @Test("an unauthorized key: exit 77 at the authentication layer")
    func unauthorized() throws {
        let fixture = try TunnelFixture(authorize: false)
        let result = try check(fixture, remotePort: 9)
        #expect(result.status == 77)
        #expect(result.stderr.contains("✗ authentication"))
        #expect(result.stderr.contains(fixture.key.line))
    }

    @Test("a server that wants a password, with and without OPENCODE_SERVER_PASSWORD: exit 79 until it is right")
    func password() throws {
        let backend = try OpenCodeStandIn(password: "s3cret")
        let fixture = try TunnelFixture()
        let none = try check(fixture, remotePort: backend.port)
        #expect(none.status == 79)
        #expect(none.stderr.contains("it asks for a password: set OPENCODE_PASSWORD"))
        let wrong = try check(fixture, remotePort: backend.port, environment: ["OPENCODE_SERVER_PASSWORD": "nope"])
        #expect(wrong.status == 79)
        #expect(wrong.stderr.contains("OpenCode refused the password"))
        let right = try check(fixture, remotePort: backend.port, environment: ["OPENCODE_SERVER_PASSWORD": "s3cret"])
        #expect(right.status == 0, "\(right.stderr)")
        #expect(!right.stderr.contains("s3cret"))
    }

    @Test("a web server that is not OpenCode is named as such")
    func notOpenCode() throws {
        let backend = try OpenCodeStandIn(flavor: "other")
        let result = try check(backend)
        #expect(result.status == 69)
        #expect(result.stderr.contains("but it is not an OpenCode server"))
        #expect(result.stderr.contains("Welcome to nginx"))
    }

    @Test(
        "tunnel up --bind ::1: the health test reaches the forward on ::1 and passes",
        .enabled(if: canListenOnIPv6Loopback, "this machine has no ::1"))
    func healthOnIPv6Bind() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(remotePort: backend.port, extra: ["--bind", "::1"])
        defer { tunnel.signal(SIGTERM); _ = tunnel.waitForExit(timeout: 5) }
        #expect(
            tunnel.waitForLine(containing: "health ✓ OpenCode 1.0.0 (API 1) healthy") != nil, "\(tunnel.stderrText)")
        #expect(!tunnel.stderrText.contains("health ✗"))
    }

    @Test("an event stream that never says server.connected fails the events layer")
    func noServerConnected() throws {
        let backend = try OpenCodeStandIn(flavor: "nosse", heartbeat: 0.5)
        let result = try check(backend)
        #expect(result.status == 69)
        #expect(result.stderr.contains("✓ health"))
        #expect(result.stderr.contains("✗ events"))
        #expect(result.stderr.contains("did not send server.connected"))
    }

    @Test("happy path through a real ssh -R reverse tunnel made from the printed command; up says health ✓")
    func realReverseTunnel() throws {
        let backend = try OpenCodeStandIn()
        let homeKeys = try TempDirectory("octunnel-homeside")
        try runTool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", homeKeys.file("key")])
        let homePublic = try String(contentsOfFile: homeKeys.file("key.pub"), encoding: .utf8)
        let fixture = try TunnelFixture()
        try (try String(contentsOfFile: fixture.sshd.authorizedKeysPath, encoding: .utf8) + homePublic)
            .write(toFile: fixture.sshd.authorizedKeysPath, atomically: true, encoding: .utf8)
        let vpsPort = freePort()
        let printed = try fixture.run([
            "tunnel", "reverse-command", fixture.target, "--remote-port", String(vpsPort),
            "--home-port", String(backend.port),
        ])
        #expect(printed.status == 0)
        var words = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(
            String.init)
        #expect(words.first == "ssh")
        words.removeFirst()
        let reverse = try RunningProcess(
            "/usr/bin/ssh",
            [
                "-i", homeKeys.file("key"), "-o", "UserKnownHostsFile=\(homeKeys.file("known_hosts"))",
                "-o", "StrictHostKeyChecking=accept-new", "-o", "BatchMode=yes",
            ] + words)
        defer { reverse.signal(SIGTERM); _ = reverse.waitForExit(timeout: 5) }
        #expect(
            waitUntil(timeout: 15) {
                let fd = connectLoopback(vpsPort); if fd >= 0 { close(fd) }; return fd >= 0
            }, "\(reverse.stderrText)")
        let result = try check(fixture, remotePort: vpsPort)
        #expect(result.status == 0, "\(result.stderr)")
        let tunnel = try fixture.up(remotePort: vpsPort)
        #expect(
            tunnel.waitForLine(containing: "health ✓ OpenCode 1.0.0 (API 1) healthy through 127.0.0.1") != nil,
            "\(tunnel.stderrText)")
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0)
    }

    @Test("ssh -G accepts the printed command and shows the right forward, port and user")
    func sshAcceptsPrintedCommand() throws {
        let fixture = try TunnelFixture()
        for (target, port) in [
            ("alice@vps.example.com:2222", "2222"), ("bob@[2001:db8::1]:2200", "2200"), ("carol@vps.example.com", "22"),
        ] {
            let printed = try fixture.run([
                "tunnel", "reverse-command", target, "--remote-port", "18081", "--home-port", "4097",
            ])
            #expect(printed.status == 0)
            let words = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(
                String.init)
            let config = try runTool("/usr/bin/ssh", ["-G"] + words.dropFirst())
            #expect(config.contains("remoteforward [127.0.0.1]:18081 [127.0.0.1]:4097"), "\(config)")
            #expect(config.contains("\nport \(port)\n"))
            #expect(config.contains("exitonforwardfailure yes"))
            #expect(config.contains("serveraliveinterval 30"))
        }
    }

    @Test("the systemd unit and the launchd plist are valid files")
    func serviceFiles() throws {
        let fixture = try TunnelFixture()
        let unit = try fixture.run(["tunnel", "reverse-command", "me@vps.example.com:2222", "--format", "systemd"])
        #expect(unit.status == 0)
        var sections: [String: [String: String]] = [:]
        var current = ""
        for line in unit.stdout.split(separator: "\n").map(String.init) where !line.hasPrefix("#") && !line.isEmpty {
            if line.hasPrefix("[") { current = line; continue }
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            #expect(parts.count == 2, "bad unit line \(line)")
            sections[current, default: [:]][parts[0]] = parts.count == 2 ? parts[1] : ""
        }
        #expect(sections["[Service]"]?["Restart"] == "always")
        #expect(sections["[Service]"]?["RestartSec"] == "5")
        #expect(sections["[Unit]"]?["After"] == "network-online.target")
        #expect(sections["[Service]"]?["ExecStart"]?.hasPrefix("/usr/bin/ssh -N ") == true)
        #expect(sections["[Install]"]?["WantedBy"] != nil)

        let plist = try fixture.run(["tunnel", "reverse-command", "me@vps.example.com:2222", "--format", "launchd"])
        #expect(plist.status == 0)
        let parsed = try runTool(
            python3,
            [
                "-c",
                "import plistlib,sys,json; p=plistlib.loads(sys.stdin.buffer.read()); print(json.dumps(p))",
            ], stdin: plist.stdout)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(parsed.utf8)) as? [String: Any])
        #expect(object["KeepAlive"] as? Bool == true)
        #expect(object["RunAtLoad"] as? Bool == true)
        #expect((object["ProgramArguments"] as? [String])?.contains("me@vps.example.com") == true)

        let autossh = try fixture.run(["tunnel", "reverse-command", "me@vps.example.com", "--format", "autossh"])
        #expect(autossh.stdout.hasPrefix("AUTOSSH_GATETIME=0 autossh -M 0 -N "))
    }

    @Test("saved settings: --save, defaults for later commands, config show, corrupt file exit 65 untouched")
    func savedSettings() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(remotePort: backend.port, extra: ["--save", "--home-port", "4100", "--no-health"])
        _ = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0)
        let mode =
            try FileManager.default.attributesOfItem(atPath: fixture.home.file("config.json"))[.posixPermissions]
            as? Int
        #expect(mode == 0o600)
        let shown = try fixture.run(["config", "show"])
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("\"remotePort\":\(backend.port)"))
        #expect(shown.stdout.contains("\"homePort\":4100"))
        let reverse = try fixture.run(["tunnel", "reverse-command"])
        #expect(
            reverse.stdout.contains(
                "-R 127.0.0.1:\(backend.port):127.0.0.1:4100 -p \(fixture.sshd.port) root@127.0.0.1"))
        let checked = try run(octunnelBinary, ["tunnel", "check", "--home", fixture.home.path])
        #expect(checked.status == 0, "\(checked.stderr)")

        // The saved ports belong to the saved VPS; another target starts from the defaults.
        let other = try fixture.run(["tunnel", "reverse-command", "me@other.example.com"])
        #expect(other.stdout.contains("-R 127.0.0.1:18080:127.0.0.1:4096 me@other.example.com"), "\(other.stdout)")
        // A non-default --remote-host is saved too.
        let again = try fixture.up(remotePort: backend.port, extra: ["--save", "--remote-host", "::1", "--no-health"])
        _ = try #require(again.forwardedPort(), "\(again.stderrText)")
        again.signal(SIGINT)
        #expect(again.waitForExit(timeout: 5) == 0)
        #expect(try fixture.run(["config", "show"]).stdout.contains("\"remoteHost\":\"::1\""))
        let savedReverse = try fixture.run(["tunnel", "reverse-command"]).stdout
        #expect(savedReverse.contains("-R [::1]:\(backend.port):127.0.0.1:4100"), "\(savedReverse)")

        let garbage = (0..<512).map { _ in UInt8.random(in: 0...255) }
        try Data(garbage).write(to: URL(fileURLWithPath: fixture.home.file("config.json")))
        for arguments in [["config", "show"], ["tunnel", "reverse-command"]] {
            let result = try fixture.run(arguments)
            #expect(result.status == 65)
            #expect(result.stderr.contains("config.json"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.home.file("config.json"))) == Data(garbage))
    }
}

/// Whether ::1 exists here (some containers have no IPv6 loopback).
let canListenOnIPv6Loopback: Bool = {
    guard let probe = try? Sockets.listen(bind: "::1", port: 0) else { return false }
    probe.socket.close()
    return true
}()
