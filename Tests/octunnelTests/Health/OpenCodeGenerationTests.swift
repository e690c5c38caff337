import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// One OpenCode generation as the stand-in plays it, and what octunnel must say about it.
struct OpenCodeFlavour: Sendable, CustomTestStringConvertible {
    let flavour: String
    let version: String
    let api: Int
    let healthPath: String
    let eventsPath: String
    let needsPassword: String

    var testDescription: String { "\(flavour) (OpenCode \(version))" }

    static let all: [OpenCodeFlavour] = [
        OpenCodeFlavour(
            flavour: "opencode1", version: "1.14.30", api: 1, healthPath: "/global/health", eventsPath: "/global/event",
            needsPassword: "OpenCode 1 was started with OPENCODE_SERVER_PASSWORD, so it asks for a password"),
        OpenCodeFlavour(
            flavour: "opencode2.0.3", version: "2.0.3", api: 2, healthPath: "/api/health", eventsPath: "/api/event",
            needsPassword: "OpenCode 2 asks for a password: set OPENCODE_PASSWORD to the one `opencode serve` printed"),
        OpenCodeFlavour(
            flavour: "opencode2", version: "2.0.17", api: 2, healthPath: "/api/info", eventsPath: "/api/event",
            needsPassword: "OpenCode 2 asks for a password: set OPENCODE_PASSWORD to the one `opencode serve` printed"),
    ]
}

@Suite(
    "each OpenCode generation through a real sshd: health, events, its password", .ownThreads, .timeLimit(.minutes(3)))
struct OpenCodeGenerationTests {
    private func check(
        _ fixture: TunnelFixture, remotePort: Int, extra: [String] = [], password: String? = nil
    ) throws -> ProcessResult {
        try tunnelCheck(
            fixture, remotePort: remotePort, extra: extra,
            environment: ["OPENCODE_SERVER_PASSWORD": password, "OPENCODE_SERVER_USERNAME": nil])
    }

    /// A 2.x stand-in, the password it made up, a fixture, and a directory `name` whose `pw`
    /// holds that password as --password-file takes it (owner-only, one trailing newline).
    static func passwordFileSetup(
        _ name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws
        -> (backend: OpenCodeStandIn, password: String, fixture: TunnelFixture, files: TempDirectory)
    {
        let backend = try OpenCodeStandIn(flavor: "opencode2")
        let password = try #require(
            backend.password, "a 2.x stand-in always has a password", sourceLocation: sourceLocation)
        let fixture = try TunnelFixture()
        let files = try TempDirectory(name)
        try files.write("pw", password + "\n", mode: 0o600)
        return (backend, password, fixture, files)
    }

    /// Whether `text` shows the password or the Basic token made of it, in any form we send.
    private func leaks(_ text: String, password: String) -> Bool {
        let token = Data("opencode:\(password)".utf8).base64EncodedString()
        return text.contains(password) || text.contains(token) || text.lowercased().contains("authorization: basic")
    }

    @Test(
        "tunnel check: with the password it names the version and API; without it 1.x exits 79 saying what to do, 2.x passes (its own 401 proves the path) saying what was not checked; a wrong one 79",
        arguments: OpenCodeFlavour.all)
    func flavour(_ flavour: OpenCodeFlavour) throws {
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let backend = try OpenCodeStandIn(flavor: flavour.flavour, password: password, version: flavour.version)
        let fixture = try TunnelFixture()

        let good = try check(fixture, remotePort: backend.port, password: password)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stderr.contains("✓ health ("), "\(good.stderr)")
        #expect(
            good.stderr.contains(
                "OpenCode \(flavour.version) (API \(flavour.api)) healthy through 127.0.0.1 (\(flavour.healthPath))"),
            "\(good.stderr)")
        #expect(good.stderr.contains("✓ events ("), "\(good.stderr)")
        #expect(good.stderr.contains("\(flavour.eventsPath) sent server.connected"), "\(good.stderr)")

        let none = try check(fixture, remotePort: backend.port)
        if flavour.api == 1 {
            #expect(none.status == 79, "\(none.stderr)")
            #expect(none.stderr.contains("✗ health"))
            #expect(none.stderr.contains(flavour.needsPassword), "\(none.stderr)")
        } else {
            #expect(none.status == 0, "\(none.stderr)")
            #expect(
                none.stderr.contains("✓ health (") && none.stderr.contains("OpenCode 2 reached through 127.0.0.1 ("),
                "\(none.stderr)")
            #expect(
                none.stderr.contains(
                    "it asks for a password; none given here: the API and event stream were not checked"),
                "\(none.stderr)")
            #expect(
                none.stderr.contains(
                    "– events (0 ms): not checked: to check them, set OPENCODE_PASSWORD or give --password-file PATH"),
                "\(none.stderr)")
            #expect(
                none.stderr.contains(
                    "OpenCode 2 is reachable through 127.0.0.1; its API and event stream were not checked"),
                "\(none.stderr)")
            #expect(!none.stderr.contains("all layers ✓"), "\(none.stderr)")
        }
        #expect(!none.stderr.contains("not an OpenCode server"))

        let wrong = try check(fixture, remotePort: backend.port, extra: ["--json"], password: "not-it")
        #expect(wrong.status == 79, "\(wrong.stderr)")
        let verdict = try #require(try JSONSerialization.jsonObject(with: Data(wrong.stdout.utf8)) as? [String: Any])
        #expect(verdict["exitCode"] as? Int == 79)
        #expect(
            (verdict["message"] as? String)?.contains("OpenCode refused the password (from OPENCODE_SERVER_PASSWORD)")
                == true, "\(wrong.stdout)")

        for result in [good, none, wrong] {
            #expect(!leaks(result.stdout + result.stderr, password: password))
            #expect(!leaks(result.stdout + result.stderr, password: "not-it"))
        }
    }

    @Test(
        "--save remembers --password-file (its absolute path, never the password): a later check with neither passes; a saved file since removed is named"
    )
    func savedPasswordFile() throws {
        let (backend, password, fixture, files) = try Self.passwordFileSetup("octunnel-pwsave")

        // Given relative to the working directory, saved as an absolute path.
        let command = [
            octunnelBinary, "tunnel", "up", "--home", fixture.home.path, fixture.target, "--local-port", "0",
            "--remote-port", String(backend.port), "--connect-timeout", "10", "--no-health", "--save",
            "--password-file", "pw",
        ]
        let tunnel = try RunningProcess(
            "/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", files.path] + command)
        _ = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0)
        let shown = try fixture.run(["config", "show"])
        let saved = files.file("pw").replacingOccurrences(of: "//", with: "/")
        #expect(
            shown.stdout.replacingOccurrences(of: "\\/", with: "/").contains("\"passwordFile\":\"\(saved)\""),
            "\(shown.stdout)")
        #expect(!shown.stdout.contains(password))

        var env = inheritedEnvironment
        env["OPENCODE_SERVER_PASSWORD"] = nil
        let checked = try run(
            octunnelBinary, ["tunnel", "check", "--home", fixture.home.path, "--health-timeout", "3"], environment: env)
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(checked.stderr.contains("OpenCode 2.0.17 (API 2) healthy"), "\(checked.stderr)")
        #expect(!leaks(checked.stdout + checked.stderr, password: password))

        // The file is gone: the check says where the password was to come from.
        try FileManager.default.removeItem(atPath: files.file("pw"))
        let missing = try run(
            octunnelBinary, ["tunnel", "check", "--home", fixture.home.path, "--health-timeout", "3"], environment: env)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains(saved), "\(missing.stderr)")
    }

    @Test(
        "--password-file: owner-only (0644 refused, exit 77), its line is the password; up --json --verbose never shows it"
    )
    func passwordFile() throws {
        let (backend, password, fixture, files) = try Self.passwordFileSetup("octunnel-pwfile")
        try files.write("open", password + "\n", mode: 0o644)
        try files.write("wrong", "not-it\n", mode: 0o600)

        let open = try check(fixture, remotePort: backend.port, extra: ["--password-file", files.file("open")])
        #expect(open.status == 77, "\(open.stderr)")
        #expect(open.stderr.contains("chmod 600 \(files.file("open"))"))

        let good = try check(
            fixture, remotePort: backend.port, extra: ["--password-file", files.file("pw"), "--json"],
            password: "not-it")
        #expect(good.status == 0, "the file wins over the environment: \(good.stdout) \(good.stderr)")
        #expect(good.stdout.contains("OpenCode 2.0.17 (API 2) healthy"))

        let wrong = try check(fixture, remotePort: backend.port, extra: ["--password-file", files.file("wrong")])
        #expect(wrong.status == 79)
        #expect(
            wrong.stderr.contains("OpenCode refused the password (from --password-file \(files.file("wrong")))"),
            "\(wrong.stderr)")

        let tunnel = try fixture.up(
            remotePort: backend.port, extra: ["--json", "--verbose", "--password-file", files.file("pw")])
        let health = tunnel.waitForLine(containing: "\"event\":\"health\"", stdout: true)
        #expect(health?.contains("\"api\":2") == true, "\(tunnel.stdout) \(tunnel.stderrText)")
        #expect(health?.contains("\"version\":\"2.0.17\"") == true)
        #expect(health?.contains("\"healthy\":true") == true)
        let port = try #require(forwardedPortFromJSON(tunnel))
        #expect(
            httpGet(port: port, path: "/api/info")?.contains("401") == true,
            "a client without the password is still refused")
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0)

        for output in [
            open.stdout + open.stderr, good.stdout + good.stderr, wrong.stdout + wrong.stderr,
            tunnel.stdout.joined(separator: "\n") + tunnel.stderrText,
        ] {
            #expect(!leaks(output, password: password))
            #expect(!leaks(output, password: "not-it"))
        }
    }

    @Test(
        "tunnel up without the password: health ✓ OpenCode 2 reached, saying the API and event stream were not checked and how to have them checked (never 'not OpenCode'); the tunnel stays up"
    )
    func upWithoutPassword() throws {
        let backend = try OpenCodeStandIn(flavor: "opencode2.0.3")
        let fixture = try TunnelFixture()
        var env = inheritedEnvironment
        env["OPENCODE_SERVER_PASSWORD"] = nil
        let tunnel = try RunningProcess(
            octunnelBinary,
            [
                "tunnel", "up", "--home", fixture.home.path, fixture.target, "--local-port", "0",
                "--remote-port", String(backend.port), "--connect-timeout", "10",
            ], environment: env)
        let line = tunnel.waitForLine(containing: "health ")
        #expect(
            line?.contains(
                "health ✓ OpenCode 2 reached through 127.0.0.1 (it asks for a password; none given here: the API and event stream were not checked); to check them, set OPENCODE_PASSWORD or give --password-file PATH"
            ) == true,
            "\(tunnel.stderrText)")
        #expect(!tunnel.stderrText.contains("not an OpenCode server"))
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0)
    }

    @Test("--home-port's help names serve's 4096 and the 2.x service's 49374")
    func homePortHelp() throws {
        let help = try run(octunnelBinary, ["tunnel", "reverse-command", "--help"])
        let text = (help.stdout + help.stderr).replacingOccurrences(of: "\n", with: " ")
        #expect(text.contains("4096"))
        #expect(text.contains("49374"))
    }

    private func forwardedPortFromJSON(_ process: RunningProcess) -> Int? {
        guard let line = process.waitForLine(containing: "\"event\":\"forwarding\"", stdout: true),
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { return nil }
        if let port = object["localPort"] as? Int { return port }
        if let local = object["local"] as? String { return Int(local.split(separator: ":").last ?? "") }
        return nil
    }
}
