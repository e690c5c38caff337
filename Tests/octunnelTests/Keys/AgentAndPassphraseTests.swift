import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `--agent` against a real ssh-agent and sshd, and passphrase-protected keys opened through
/// SSH_ASKPASS (no terminal in tests), as a user runs them.
@Suite("ssh-agent and passphrase-protected keys", .ownThreads, .timeLimit(.minutes(3)))
struct AgentAndPassphraseTests {
    /// A closed port behind the VPS: the layers up to authentication are what these tests look at.
    static let closedRemotePort = "9"

    private func check(
        _ fixture: TunnelFixture, _ extra: [String] = [], environment: [String: String] = [:]
    ) throws -> ProcessResult {
        try run(
            octunnelBinary,
            [
                "tunnel", "check", "--home", fixture.home.path, fixture.target,
                "--remote-port", Self.closedRemotePort, "--connect-timeout", "10", "--health-timeout", "3",
            ] + extra,
            environment: ["PATH": "/usr/bin:/bin", "HOME": fixture.home.path, "LANG": "C.UTF-8"].merging(environment) {
                $1
            })
    }

    /// An askpass program that prints `answer` and appends a line to `log` for each call.
    private func askpass(in dir: TempDirectory, answer: String) throws -> (program: String, log: String) {
        let log = dir.file("askpass.log")
        try dir.write("askpass.sh", "#!/bin/sh\necho \"$1\" >> '\(log)'\nprintf '%s\\n' '\(answer)'\n", mode: 0o700)
        return (dir.file("askpass.sh"), log)
    }

    private func keygen(_ type: String, _ path: String, bits: [String] = []) throws -> SSHPublicKey {
        try sshKeygen(["-q", "-t", type] + bits + ["-N", "", "-C", "\(type) test key", "-f", path])
        return try #require(
            SSHPublicKey.parse(line: try readText(path + ".pub").trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test("agent Ed25519 and ECDSA keys sign in with no key file; an RSA agent key is skipped")
    func agentKeysSignIn() throws {
        let fixture = try TunnelFixture(authorize: false)
        let agent = try SSHAgentProcess()
        let keys = try TempDirectory("octunnel-agent-keys")
        let rsa = try keygen("rsa", keys.file("rsa"), bits: ["-b", "2048"])
        let ed25519 = try keygen("ed25519", keys.file("ed25519"))
        let ecdsa = try keygen("ecdsa", keys.file("ecdsa"))
        for name in ["rsa", "ed25519", "ecdsa"] {
            try agent.add(keys.file(name))
            // No key file is left for octunnel to read.
            try FileManager.default.removeItem(atPath: keys.file(name))
        }
        try FileManager.default.removeItem(atPath: fixture.home.file("id_ed25519"))

        for accepted in [ecdsa, ed25519] {
            try (rsa.line + "\n" + accepted.line + "\n").write(
                toFile: fixture.sshd.authorizedKeysPath, atomically: true, encoding: .utf8)
            let result = try check(fixture, ["--agent"], environment: agent.environment)
            #expect(result.stderr.contains("✓ authentication ("), "\(result.stderr)")
            #expect(result.stderr.contains("root with ssh-agent key \(accepted.fingerprint)"), "\(result.stderr)")
            let acceptedLines = fixture.sshd.log.split(separator: "\n").filter {
                $0.contains("Accepted publickey for root")
            }
            #expect(acceptedLines.last?.contains(accepted.fingerprint) == true, "\(fixture.sshd.log)")
        }
        // sshd never saw the RSA key: octunnel skipped it.
        #expect(!fixture.sshd.log.contains(rsa.fingerprint), "\(fixture.sshd.log)")
    }

    @Test("no agent key accepted: exit 77 listing the fingerprints tried and the line for the first")
    func agentKeysRefused() throws {
        let fixture = try TunnelFixture(authorize: false)
        let agent = try SSHAgentProcess()
        let keys = try TempDirectory("octunnel-agent-keys")
        let ed25519 = try keygen("ed25519", keys.file("ed25519"))
        let ecdsa = try keygen("ecdsa", keys.file("ecdsa"))
        let rsa = try keygen("rsa", keys.file("rsa"), bits: ["-b", "2048"])
        for name in ["ed25519", "ecdsa", "rsa"] { try agent.add(keys.file(name)) }

        let result = try check(fixture, ["--agent"], environment: agent.environment)

        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("✗ authentication"))
        #expect(
            result.stderr.contains("refused every ssh-agent key tried: \(ed25519.fingerprint), \(ecdsa.fingerprint)"),
            "\(result.stderr)")
        #expect(result.stderr.contains("  \(ed25519.line)"))
        #expect(result.stderr.contains(rsa.fingerprint) && result.stderr.contains("rsa-sha2"), "\(result.stderr)")
    }

    @Test("--agent with no agent: SSH_AUTH_SOCK unset or dead, exit 81 before connecting")
    func noAgent() throws {
        let fixture = try TunnelFixture()
        let unset = try check(fixture, ["--agent"])
        #expect(unset.status == 81, "\(unset.stderr)")
        #expect(unset.stderr.contains("SSH_AUTH_SOCK is not set"))
        let dead = try check(fixture, ["--agent"], environment: ["SSH_AUTH_SOCK": fixture.home.file("no-agent.sock")])
        #expect(dead.status == 81, "\(dead.stderr)")
        #expect(dead.stderr.contains("nothing answers at SSH_AUTH_SOCK=\(fixture.home.file("no-agent.sock"))"))
        #expect(!fileExists(fixture.knownHosts), "nothing is contacted or recorded before the agent is found")
    }

    @Test("a passphrase-protected key opens through SSH_ASKPASS; a wrong passphrase exits 80 and changes nothing")
    func passphraseThroughAskpass() throws {
        let fixture = try TunnelFixture(authorize: false)
        let scratch = try TempDirectory("octunnel-askpass")
        let keyPath = scratch.file("id_ed25519")
        try sshKeygen(["-q", "-t", "ed25519", "-N", "open sesame", "-C", "encrypted", "-f", keyPath])
        let key = try #require(
            SSHPublicKey.parse(line: try readText(keyPath + ".pub").trimmingCharacters(in: .whitespacesAndNewlines)))
        try (key.line + "\n").write(toFile: fixture.sshd.authorizedKeysPath, atomically: true, encoding: .utf8)
        let before = try readBytes(keyPath)

        let right = try askpass(in: scratch, answer: "open sesame")
        let opened = try check(
            fixture, ["--identity", keyPath],
            environment: ["SSH_ASKPASS": right.program, "SSH_ASKPASS_REQUIRE": "force"])
        #expect(opened.stderr.contains("✓ authentication ("), "\(opened.stderr)")
        #expect(opened.stderr.contains(key.fingerprint))
        #expect(try readText(right.log) == "Enter passphrase for key '\(keyPath)': \n")
        #expect(!opened.stderr.contains("open sesame") && !opened.stdout.contains("open sesame"))

        try FileManager.default.removeItem(atPath: fixture.knownHosts)
        let wrong = try askpass(in: scratch, answer: "open barley")
        let refused = try check(
            fixture, ["--identity", keyPath],
            environment: ["SSH_ASKPASS": wrong.program, "SSH_ASKPASS_REQUIRE": "force"])
        #expect(refused.status == 80, "\(refused.stderr)")
        #expect(
            refused.stderr.trimmingCharacters(in: .newlines)
                == "octunnel: wrong passphrase for key file \(keyPath); nothing was changed.")
        #expect(try readBytes(keyPath) == before)
        #expect(!fileExists(fixture.knownHosts))

        let never = try check(
            fixture, ["--identity", keyPath],
            environment: ["SSH_ASKPASS": right.program, "SSH_ASKPASS_REQUIRE": "never"])
        #expect(never.status == 81, "\(never.stderr)")
        #expect(never.stderr.contains("SSH_ASKPASS_REQUIRE=never"))
    }

    @Test("keygen --passphrase (and --rotate) writes what ssh-keygen -y -P opens; pubkey needs no passphrase")
    func keygenPassphrase() throws {
        let scratch = try TempDirectory("octunnel-keygen")
        let home = scratch.file("home")
        let ask = try askpass(in: scratch, answer: "long enough passphrase")
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": scratch.path, "SSH_ASKPASS": ask.program, "SSH_ASKPASS_REQUIRE": "force",
        ]

        let made = try run(octunnelBinary, ["keygen", "--passphrase", "--home", home], environment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try readText(ask.log).split(separator: "\n").count == 2, "asked twice")
        let derived = try sshKeygen(["-y", "-P", "long enough passphrase", "-f", home + "/id_ed25519"]).stdout
        #expect(made.stdout.hasPrefix(derived.trimmingCharacters(in: .whitespacesAndNewlines)))
        let without = try run(
            "/usr/bin/ssh-keygen", ["-y", "-P", "", "-f", home + "/id_ed25519"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(without.status != 0)

        let printed = try run(
            octunnelBinary, ["pubkey", "--home", home], environment: ["PATH": "/usr/bin:/bin", "HOME": scratch.path])
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout == made.stdout)

        let rotated = try run(
            octunnelBinary, ["keygen", "--rotate", "--passphrase", "--home", home], environment: environment)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(try readText(home + "/id_ed25519.prev.pub") == made.stdout)
        _ = try sshKeygen(["-y", "-P", "long enough passphrase", "-f", home + "/id_ed25519"])
        _ = try sshKeygen(["-y", "-P", "long enough passphrase", "-f", home + "/id_ed25519.prev"])

        let mismatch = scratch.file("mismatch.sh")
        try scratch.write(
            "mismatch.sh", "#!/bin/sh\ncase \"$1\" in *again*) echo two;; *) echo one;; esac\n", mode: 0o700)
        let differ = try run(
            octunnelBinary, ["keygen", "--passphrase", "--home", scratch.file("other")],
            environment: environment.merging(["SSH_ASKPASS": mismatch]) { $1 })
        #expect(differ.status == 64, "\(differ.stderr)")
        #expect(!fileExists(scratch.file("other") + "/id_ed25519"))
    }

    private func up(
        _ fixture: TunnelFixture, remotePort: Int, _ extra: [String], environment: [String: String]
    ) throws -> RunningProcess {
        try RunningProcess(
            octunnelBinary,
            [
                "tunnel", "up", "--home", fixture.home.path, fixture.target, "--local-port", "0",
                "--remote-port", String(remotePort), "--connect-timeout", "10", "--keepalive", "2", "--no-health",
            ] + extra,
            environment: ["PATH": "/usr/bin:/bin", "HOME": fixture.home.path, "LANG": "C.UTF-8"].merging(environment) {
                $1
            })
    }

    @Test("tunnel up with an encrypted key: asked once; reconnects reuse the key held in memory")
    func reconnectsReuseTheDecryptedKey() throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture(authorize: false)
        let scratch = try TempDirectory("octunnel-askpass")
        let keyPath = scratch.file("id_ed25519")
        try sshKeygen(["-q", "-t", "ed25519", "-N", "open sesame", "-f", keyPath])
        try (try readText(keyPath + ".pub")).write(
            toFile: fixture.sshd.authorizedKeysPath, atomically: true, encoding: .utf8)
        let ask = try askpass(in: scratch, answer: "open sesame")

        let tunnel = try up(
            fixture, remotePort: echo.port, ["--identity", keyPath],
            environment: ["SSH_ASKPASS": ask.program, "SSH_ASKPASS_REQUIRE": "force"])
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        #expect(roundTrip(port: port, seed: 1))
        // The key file goes away: a reconnect cannot be reading it.
        try FileManager.default.removeItem(atPath: keyPath)
        fixture.sshd.stop(hard: true)
        #expect(tunnel.waitForLine(containing: "disconnected:", timeout: 15) != nil, "\(tunnel.stderrText)")
        try fixture.sshd.start()
        #expect(
            waitUntil(timeout: 40) { tunnel.stderr.filter { $0.hasPrefix("connected to") }.count >= 2 },
            "\(tunnel.stderrText)")
        #expect(roundTrip(port: port, seed: 2))
        #expect(try readText(ask.log).split(separator: "\n").count == 1, "the passphrase is asked once")
        #expect(!tunnel.stderrText.contains("open sesame"))
    }

    @Test(
        "--agent: the agent going away leaves the session alone; reconnects retry, say why, and recover; --save remembers --agent"
    )
    func agentGoneDuringReconnect() throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture(authorize: false)
        let agent = try SSHAgentProcess()
        let keys = try TempDirectory("octunnel-agent-keys")
        let key = try keygen("ed25519", keys.file("ed25519"))
        try (key.line + "\n").write(toFile: fixture.sshd.authorizedKeysPath, atomically: true, encoding: .utf8)
        try agent.add(keys.file("ed25519"))

        let tunnel = try up(fixture, remotePort: echo.port, ["--agent", "--save"], environment: agent.environment)
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        #expect(roundTrip(port: port, seed: 1))
        let saved = try #require(
            try JSONSerialization.jsonObject(with: Data(readBytes(fixture.home.file("config.json")))) as? [String: Any])
        let profiles = saved["profiles"] as? [String: Any]
        let tunnelRole = (profiles?["default"] as? [String: Any])?["tunnel"] as? [String: Any]
        #expect(tunnelRole?["agent"] as? Bool == true, "config.json: \(saved)")

        agent.stop()
        #expect(roundTrip(port: port, seed: 2), "the running session does not need the agent")
        fixture.sshd.stop(hard: true)
        try fixture.sshd.start()
        #expect(
            tunnel.waitForLine(containing: "disconnected: no ssh-agent to sign in with", timeout: 30) != nil,
            "\(tunnel.stderrText)")
        #expect(tunnel.isRunning)
        try agent.start()
        try agent.add(keys.file("ed25519"))
        #expect(
            waitUntil(timeout: 40) { tunnel.stderr.filter { $0.hasPrefix("connected to") }.count >= 2 },
            "\(tunnel.stderrText)")
        #expect(roundTrip(port: port, seed: 3))
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 10) == 0)

        // The saved default signs in with the agent again, with no --agent.
        let checked = try run(
            octunnelBinary,
            [
                "tunnel", "check", "--home", fixture.home.path, "--remote-port", Self.closedRemotePort,
                "--health-timeout", "3",
            ],
            environment: ["PATH": "/usr/bin:/bin", "HOME": fixture.home.path].merging(agent.environment) { $1 })
        #expect(checked.stderr.contains("root with ssh-agent key \(key.fingerprint)"), "\(checked.stderr)")
    }
}
