import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A user's OpenSSH files in a throwaway HOME: `~/.ssh/config` and `~/.ssh/known_hosts`,
/// with octunnel run as that user would run it (HOME pointing there, ssh on PATH or not).
private struct UserHome {
    let dir: TempDirectory
    var ssh: String { dir.path + "/.ssh" }

    init() throws {
        dir = try TempDirectory("octunnel-userhome")
        try FileManager.default.createDirectory(
            atPath: dir.path + "/.ssh", withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
    }

    func write(_ name: String, _ text: String) throws { try writeText(text, to: ssh + "/" + name) }

    /// HOME here, and PATH with the ssh client or (withSSH false) with nothing at all.
    func environment(withSSH: Bool = true) throws -> [String: String] {
        if withSSH { return Octunnel.environment(home: dir.path) }
        let empty = dir.path + "/empty-bin"
        try? FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        return ["PATH": empty, "HOME": dir.path, "LANG": "C.UTF-8"]
    }

    /// The sshd's host key as a known_hosts line for `name`.
    static func line(_ name: String, _ sshd: SSHDServer) throws -> String {
        let pub = try readText(sshd.hostKeyPath + ".pub").split(separator: " ").prefix(2).joined(separator: " ")
        return "\(name) \(pub)\n"
    }
}

private func octunnel(_ arguments: [String], environment: [String: String]) throws -> RunningProcess {
    try RunningProcess(octunnelBinary, arguments, environment: environment)
}

@Suite("~/.ssh/config targets and ~/.ssh/known_hosts before trust on first use", .ownThreads, .timeLimit(.minutes(3)))
struct OpenSSHConfigAndKnownHostsTests {
    @Test(
        "a ~/.ssh/config alias brings HostName, User, Port and IdentityFile, with ssh -G or by reading the file",
        arguments: [true, false])
    func aliasConnects(withSSH: Bool) async throws {
        try await offPool {
            let fixture = try TunnelFixture(authorize: false)
            let user = try UserHome()
            // Only the key the config names is authorized: octunnel's own key would be refused.
            try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "vps", "-f", user.ssh + "/vps_key"])
            try writeText(try readText(user.ssh + "/vps_key.pub"), to: fixture.sshd.authorizedKeysPath)
            let fingerprint = try sshKeygenFingerprint(user.ssh + "/vps_key.pub")
            try user.write(
                "config",
                """
                Host other
                  HostName 192.0.2.1
                Host my* !mything
                  HostName 127.0.0.1
                  User root
                  Port \(fixture.sshd.port)
                  IdentityFile ~/.ssh/vps_key
                  ServerAliveInterval 20
                Host *
                  User nobody-else

                """)
            let tunnel = try octunnel(
                [
                    "tunnel", "up", "myvps", "--home", fixture.home.path, "--local-port", "0",
                    "--remote-port", "9", "--no-health", "--connect-timeout", "10",
                ],
                environment: try user.environment(withSSH: withSSH))
            defer { tunnel.signal(SIGINT); _ = tunnel.waitForExit(timeout: 5) }
            #expect(tunnel.forwardedPort() != nil, "\(tunnel.stderrText)")
            #expect(
                tunnel.stderrText.contains("connecting to root@127.0.0.1:\(fixture.sshd.port)"), "\(tunnel.stderrText)")
            #expect(tunnel.stderrText.contains("authenticated as root with \(fingerprint)"), "\(tunnel.stderrText)")
            // Without ssh, the directive octunnel does not apply is named, on one line.
            #expect(
                tunnel.stderrText.contains("ignored for myvps: serveraliveinterval") == !withSSH, "\(tunnel.stderrText)"
            )
            #expect(fixture.sshd.log.contains("Accepted publickey for root"))
        }
    }

    @Test(
        "ProxyJump or ProxyCommand for the host exits 78 and never connects directly",
        arguments: [
            (true, "ProxyJump jump@127.0.0.1:1"), (false, "ProxyJump jump@127.0.0.1:1"),
            (true, "ProxyCommand nc %h %p"), (false, "ProxyCommand nc %h %p"),
        ])
    func proxyRefused(withSSH: Bool, directive: String) async throws {
        try await offPool {
            let fixture = try TunnelFixture()
            let user = try UserHome()
            try user.write("config", "Host jumpy\n  HostName 127.0.0.1\n  Port \(fixture.sshd.port)\n  \(directive)\n")
            // sshd's own readiness probe is the only connection it has seen so far (once logged).
            _ = waitUntil(timeout: 5) { fixture.sshd.log.contains("Connection closed by") }
            let probes = fixture.sshd.log.components(separatedBy: "Connection from").count
            let check = try octunnel(
                ["tunnel", "check", "root@jumpy", "--home", fixture.home.path],
                environment: try user.environment(withSSH: withSSH))
            #expect(check.waitForExit(timeout: 20) == 78, "\(check.stderrText)")
            let name = String(directive.split(separator: " ")[0])
            #expect(
                check.stderrText.contains("\(name) ") && check.stderrText.contains("not support"), "\(check.stderrText)"
            )
            #expect(fixture.sshd.log.components(separatedBy: "Connection from").count == probes, "\(fixture.sshd.log)")
        }
    }

    @Test(
        "a matching ~/.ssh/known_hosts entry (plain, hashed by ssh-keygen -H, written by ssh with HashKnownHosts) verifies the host and is recorded",
        arguments: ["plain", "ssh-keygen -H", "ssh HashKnownHosts"])
    func matchingEntryVerifies(kind: String) async throws {
        try await offPool {
            let fixture = try TunnelFixture()
            let user = try UserHome()
            let name = "[127.0.0.1]:\(fixture.sshd.port)"
            let knownHosts = user.ssh + "/known_hosts"
            switch kind {
            case "plain":
                try user.write(
                    "known_hosts",
                    "# mine\nother.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"
                        + (try UserHome.line("other,\(name)", fixture.sshd)))
            case "ssh-keygen -H":
                try user.write("known_hosts", try UserHome.line(name, fixture.sshd))
                try sshKeygen(["-H", "-f", knownHosts])
                #expect(try readText(knownHosts).hasPrefix("|1|"))
            default:
                let ssh = try run(
                    "/usr/bin/ssh",
                    [
                        "-F", "/dev/null", "-o", "HashKnownHosts=yes", "-o", "StrictHostKeyChecking=accept-new",
                        "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "BatchMode=yes",
                        "-i", fixture.home.file("id_ed25519"), "-p", String(fixture.sshd.port), "root@127.0.0.1",
                        "true",
                    ],
                    environment: try user.environment())
                #expect(ssh.status == 0, "\(ssh.stderr)")
                #expect(try readText(knownHosts).hasPrefix("|1|"))
            }
            let before = try readBytes(knownHosts)
            let line = kind == "plain" ? 3 : 1
            let tunnel = try octunnel(
                [
                    "tunnel", "up", "root@127.0.0.1:\(fixture.sshd.port)", "--home", fixture.home.path, "--local-port",
                    "0",
                    "--remote-port", "9", "--no-health", "--no-trust-new", "--json",
                ],
                environment: try user.environment())
            defer { tunnel.signal(SIGINT); _ = tunnel.waitForExit(timeout: 5) }
            let connected = tunnel.waitForLine(containing: "\"event\":\"connected\"", stdout: true)
            #expect(
                connected?.contains("\"hostKeyTrust\":\"openssh-known-hosts\"") == true,
                "\(tunnel.stdout) \(tunnel.stderrText)")
            #expect(
                connected?.contains("\"hostKeyVerifiedBy\":\"~/.ssh/known_hosts:\(line)\"") == true,
                "\(connected ?? "")")
            #expect(tunnel.stdout.contains { $0.contains("verified by ~/.ssh/known_hosts (line \(line))") })
            // Recorded in octunnel's own store; OpenSSH's file is untouched.
            let found = try run("/usr/bin/ssh-keygen", ["-F", name, "-f", fixture.knownHosts])
            #expect(found.status == 0)
            #expect(try readBytes(knownHosts) == before)
        }
    }

    @Test(
        "a VPS with Ed25519 and ECDSA host keys that ~/.ssh/known_hosts knows by ECDSA only is asked for ECDSA and verified"
    )
    func knownTypeIsAskedFirst() async throws {
        try await offPool {
            let keys = try TempDirectory("octunnel-hostkeys")
            try sshKeygen(["-q", "-t", "ecdsa", "-N", "", "-f", keys.file("ecdsa")])
            let fixture = try TunnelFixture(sshdConfig: "HostKey \(keys.file("ecdsa"))")
            let user = try UserHome()
            let ecdsa = try readText(keys.file("ecdsa.pub")).split(separator: " ").prefix(2).joined(separator: " ")
            try user.write("known_hosts", "[127.0.0.1]:\(fixture.sshd.port) \(ecdsa)\n")
            let tunnel = try octunnel(
                [
                    "tunnel", "up", "root@127.0.0.1:\(fixture.sshd.port)", "--home", fixture.home.path, "--local-port",
                    "0",
                    "--remote-port", "9", "--no-health",
                ], environment: try user.environment())
            defer { tunnel.signal(SIGINT); _ = tunnel.waitForExit(timeout: 5) }
            #expect(tunnel.forwardedPort() != nil, "\(tunnel.stderrText)")
            #expect(
                tunnel.stderrText.contains(
                    "host key ecdsa-sha2-nistp256 \(try sshKeygenFingerprint(keys.file("ecdsa.pub"))) verified by ~/.ssh/known_hosts (line 1)"
                ),
                "\(tunnel.stderrText)")
        }
    }

    @Test(
        "a different key in ~/.ssh/known_hosts (or @revoked) stops with 76 before authentication; --no-openssh-known-hosts skips the file",
        arguments: ["different", "revoked"])
    func contradictingEntryStops(kind: String) async throws {
        try await offPool {
            let fixture = try TunnelFixture()
            let user = try UserHome()
            let name = "[127.0.0.1]:\(fixture.sshd.port)"
            let other = try HostKey(type: "ed25519", in: user.dir.path)
            let text =
                kind == "revoked"
                ? "@revoked " + (try UserHome.line(name, fixture.sshd)) : "\(name) \(other.typeAndKey)\n"
            try user.write("known_hosts", "# first line\n" + text)
            let before = try readBytes(user.ssh + "/known_hosts")
            let arguments = [
                "tunnel", "up", "root@127.0.0.1:\(fixture.sshd.port)", "--home", fixture.home.path, "--local-port", "0",
                "--remote-port", "9", "--no-health",
            ]
            let refused = try octunnel(arguments, environment: try user.environment())
            #expect(refused.waitForExit(timeout: 20) == 76, "\(refused.stderrText)")
            #expect(refused.stderrText.contains("~/.ssh/known_hosts line 2"), "\(refused.stderrText)")
            if kind == "different" {
                #expect(refused.stderrText.contains(other.fingerprint))
                #expect(refused.stderrText.contains("ssh-keygen -R '\(name)'`"), "\(refused.stderrText)")
            }
            #expect(!fileExists(fixture.knownHosts), "nothing may be recorded")
            // sshd saw the connection end before any authentication attempt.
            #expect(waitUntil(timeout: 10) { fixture.sshd.log.contains("[preauth]") }, "\(fixture.sshd.log)")
            #expect(
                !fixture.sshd.log.contains("publickey") && !fixture.sshd.log.contains("authenticating user"),
                "\(fixture.sshd.log)")

            let skipped = try octunnel(arguments + ["--no-openssh-known-hosts"], environment: try user.environment())
            defer { skipped.signal(SIGINT); _ = skipped.waitForExit(timeout: 5) }
            #expect(skipped.forwardedPort() != nil, "\(skipped.stderrText)")
            #expect(skipped.stderrText.contains("trusted on first use"))
            #expect(try readBytes(user.ssh + "/known_hosts") == before)
        }
    }

    @Test(
        "~/.ssh/known_hosts knows the host only by ECDSA and it presents Ed25519: stops with 76 naming the known key, as ssh would ask; --expect-fingerprint or StrictHostKeyChecking accept-new accepts it on purpose"
    )
    func otherKeyTypeStops() async throws {
        try await offPool {
            let fixture = try TunnelFixture()
            let user = try UserHome()
            let name = "[127.0.0.1]:\(fixture.sshd.port)"
            let ecdsa = try HostKey(type: "ecdsa", in: user.dir.path)
            try user.write("known_hosts", "\(name) \(ecdsa.typeAndKey)\n")
            let presented = try sshKeygenFingerprint(fixture.sshd.hostKeyPath + ".pub")
            let arguments = [
                "tunnel", "up", "root@127.0.0.1:\(fixture.sshd.port)", "--home", fixture.home.path, "--local-port", "0",
                "--remote-port", "9", "--no-health",
            ]
            let refused = try octunnel(arguments, environment: try user.environment())
            #expect(refused.waitForExit(timeout: 20) == 76, "\(refused.stderrText)")
            #expect(
                refused.stderrText.contains(
                    "only by keys of other types (ecdsa-sha2-nistp256 \(ecdsa.fingerprint) (~/.ssh/known_hosts:1))"),
                "\(refused.stderrText)")
            #expect(refused.stderrText.contains("--expect-fingerprint \(presented)"), "\(refused.stderrText)")
            #expect(!fileExists(fixture.knownHosts), "nothing may be recorded")

            let expected = try octunnel(
                arguments + ["--expect-fingerprint", presented], environment: try user.environment())
            #expect(expected.forwardedPort() != nil, "\(expected.stderrText)")
            expected.signal(SIGINT)
            _ = expected.waitForExit(timeout: 5)
            try FileManager.default.removeItem(atPath: fixture.knownHosts)

            try user.write("config", "Host 127.0.0.1\n  StrictHostKeyChecking accept-new\n")
            let accepted = try octunnel(arguments, environment: try user.environment())
            defer { accepted.signal(SIGINT); _ = accepted.waitForExit(timeout: 5) }
            #expect(accepted.forwardedPort() != nil, "\(accepted.stderrText)")
            #expect(accepted.stderrText.contains("trusted on first use"), "\(accepted.stderrText)")
        }
    }

    @Test(
        "StrictHostKeyChecking yes in ~/.ssh/config (with ssh -G or read from the file): a host nothing knows is refused with 76; --expect-fingerprint lets it in",
        arguments: [true, false])
    func strictCheckingRefusesUnknownHost(withSSH: Bool) async throws {
        try await offPool {
            let fixture = try TunnelFixture()
            let user = try UserHome()
            try user.write("config", "Host 127.0.0.1\n  StrictHostKeyChecking yes\n")
            let presented = try sshKeygenFingerprint(fixture.sshd.hostKeyPath + ".pub")
            let arguments = [
                "tunnel", "up", "root@127.0.0.1:\(fixture.sshd.port)", "--home", fixture.home.path, "--local-port", "0",
                "--remote-port", "9", "--no-health",
            ]
            let refused = try octunnel(arguments, environment: try user.environment(withSSH: withSSH))
            #expect(refused.waitForExit(timeout: 20) == 76, "\(refused.stderrText)")
            #expect(refused.stderrText.contains("StrictHostKeyChecking yes"), "\(refused.stderrText)")
            #expect(!fileExists(fixture.knownHosts), "nothing may be recorded")
            let expected = try octunnel(
                arguments + ["--expect-fingerprint", presented], environment: try user.environment(withSSH: withSSH))
            defer { expected.signal(SIGINT); _ = expected.waitForExit(timeout: 5) }
            #expect(expected.forwardedPort() != nil, "\(expected.stderrText)")
        }
    }
}
