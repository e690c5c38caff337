import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing
#if canImport(Glibc)
    import Glibc
#endif

/// The careless-user half of docs/security.md's red-team list, run as the built binary:
/// rotations at once, a line break in --home, and files that are not what they seem.
@Suite(
    "careless input: concurrent rotations, injected paths, known_hosts that is not a file", .ownThreads,
    .timeLimit(.minutes(5)))
struct CarelessInputTests {
    /// The base64 blob of a public key line.
    static func blob(_ line: String) -> String? {
        let fields = line.split(separator: " ")
        return fields.count >= 2 ? String(fields[1]) : nil
    }

    @Test("rotations at once: every printed key is still on disk and the .pub matches the key")
    func concurrentRotations() async throws {
        let failures = try await offPool { () throws -> [String] in
            try withTemporaryDirectory { dir in
                let home = dir + "/oct"
                let first = try Octunnel.run(["keygen", "--home", home], in: dir)
                guard first.status == 0 else { throw HarnessError("keygen: \(first)") }
                var failures: [String] = []
                for round in 0..<6 {
                    let runs = try (0..<3).map { _ in
                        try RunningProcess(
                            try #require(Octunnel.path), ["keygen", "--rotate", "--home", home],
                            environment: Octunnel.environment(home: dir))
                    }
                    var printed: [String] = []
                    for run in runs {
                        let status = run.waitForExit(timeout: 60)
                        if status != 0 {
                            failures.append(
                                "round \(round): keygen --rotate exit \(String(describing: status)): \(run.stderrText)")
                        }
                        printed += run.stdout.compactMap(Self.blob)
                    }
                    let files = try FileManager.default.contentsOfDirectory(atPath: home).filter {
                        $0.hasSuffix(".pub")
                    }
                    let onDisk = Set(try files.compactMap { Self.blob(try readText(home + "/" + $0)) })
                    for key in printed where !onDisk.contains(key) {
                        failures.append("round \(round): printed key \(key.suffix(12)) is in no file")
                    }
                    let derived = try sshKeygen(["-y", "-f", home + "/id_ed25519"]).stdout
                    if Self.blob(derived) != Self.blob(try readText(home + "/id_ed25519.pub")) {
                        failures.append("round \(round): id_ed25519.pub does not match id_ed25519")
                    }
                }
                return failures
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// A home whose name carries a line break and a directive, with saved settings in it.
    static let injected = "oct\nExecStartPre=/bin/touch /tmp/octunnel-injected\n#"

    @Test(
        "a line break in --home or OCTUNNEL_HOME is refused, not written into the unit or the plist",
        arguments: ServiceFormat.allCases)
    func injectedHome(format: ServiceFormat) throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/" + Self.injected
            try FileManager.default.createDirectory(
                atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let sections =
                #"{"tunnel":{"host":"vps.example.com","port":22,"username":"me","remotePort":18080,"localPort":4096,"homePort":4096}}"#
            try writeText(#"{"version":2,"profiles":{"default":\#(sections)}}"#, to: home + "/config.json")
            let environment = Octunnel.environment(home: dir, ["XDG_CONFIG_HOME": dir + "/xdg"])

            let flag = try Octunnel.run(
                ["service", "install", "tunnel", "--print", "--format", format.rawValue, "--home", home],
                in: dir, environment: environment)
            var variable = environment
            variable["OCTUNNEL_HOME"] = home
            let fromEnvironment = try Octunnel.run(
                ["service", "install", "tunnel", "--print", "--format", format.rawValue],
                in: dir, environment: variable)
            for result in [flag, fromEnvironment] {
                #expect(result.status == 64, "\(result)")
                #expect(!result.stdout.contains("ExecStartPre"), "\(result.stdout)")
                #expect(result.stderr.contains("control character"), "\(result.stderr)")
                #expect(result.stderr.contains("\\x0aExecStartPre"), "\(result.stderr)")
            }
            #expect(!fileExists(dir + "/xdg"))
        }
    }

    @Test("--identity and --password-file with a line break are refused (exit 64)")
    func injectedPathOptions() throws {
        try withTemporaryDirectory { dir in
            for option in ["--identity", "--password-file"] {
                let result = try Octunnel.run(
                    ["tunnel", "check", "root@127.0.0.1:1", option, "/tmp/a\nb", "--home", dir + "/oct"], in: dir)
                #expect(result.status == 64, "\(option): \(result)")
                #expect(result.stderr.contains("control character"), "\(result.stderr)")
            }
        }
    }

    @Test("a FIFO, or a link to /dev/zero, as known_hosts is refused and left as it is")
    func knownHostsThatIsNotAFile() async throws {
        let results = try await offPool { () throws -> [(String, ProcessResult, Bool)] in
            let fixture = try TunnelFixture()
            var results: [(String, ProcessResult, Bool)] = []
            guard mkfifo(fixture.knownHosts, 0o600) == 0 else { throw HarnessError("mkfifo: \(errno)") }
            let fifo = try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(freePort()), "--connect-timeout", "10",
            ])
            var info = stat()
            results.append(("FIFO", fifo, lstat(fixture.knownHosts, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO))
            unlink(fixture.knownHosts)
            guard symlink("/dev/zero", fixture.knownHosts) == 0 else { throw HarnessError("symlink: \(errno)") }
            let zero = try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(freePort()), "--connect-timeout", "10",
            ])
            results.append(
                ("character device", zero, lstat(fixture.knownHosts, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK))
            return results
        }
        for (kind, result, kept) in results {
            #expect(result.status == 65, "\(kind): exit \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("it is a \(kind), not a regular file"), "\(kind): \(result.stderr)")
            #expect(!result.stderr.contains("trusted"), "\(kind): \(result.stderr)")
            #expect(kept, "\(kind): known_hosts was replaced")
        }
    }

    @Test("a symlinked known_hosts is written at its target and stays a link")
    func symlinkedKnownHosts() async throws {
        let (result, isLink, target) = try await offPool { () throws -> (ProcessResult, Bool, String) in
            let fixture = try TunnelFixture()
            let target = fixture.home.file("dotfiles-known_hosts")
            try writeText("# kept\n", to: target)
            guard symlink(target, fixture.knownHosts) == 0 else { throw HarnessError("symlink: \(errno)") }
            let result = try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(freePort()), "--connect-timeout", "10",
            ])
            var info = stat()
            return (
                result, lstat(fixture.knownHosts, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, try readText(target)
            )
        }
        #expect(result.stderr.contains("✓ host key"), "\(result.stderr)")
        #expect(isLink, "known_hosts lost its link")
        #expect(target.hasPrefix("# kept\n") && target.contains("ssh-ed25519"), "\(target)")
    }
}
