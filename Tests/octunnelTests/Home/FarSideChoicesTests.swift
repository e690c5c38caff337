import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 46's reproductions, as an attacker tried them, through a real sshd: what the home
/// machine's files and the far side say chooses nothing: no address off this machine, no
/// password to another host, no stopped forward, no port the far side picks here.
@Suite("what the home's files and the far side say choose nothing", .ownThreads, .timeLimit(.minutes(3)))
struct FarSideChoicesTests {
    /// OpenCode 2's directories inside a scratch directory, as `home up`'s environment.
    struct ServiceDirectories {
        let scratch: TempDirectory
        var environment: [String: String] {
            ["XDG_STATE_HOME": scratch.file("state"), "XDG_CONFIG_HOME": scratch.file("config")]
        }
        var registration: String { scratch.file("state/opencode/service.json") }
        var settings: String { scratch.file("config/opencode/service.json") }

        init() throws {
            scratch = try TempDirectory("octunnel-service")
            for directory in ["state/opencode", "config/opencode"] {
                try FileManager.default.createDirectory(
                    atPath: scratch.file(directory), withIntermediateDirectories: true)
            }
        }

        /// Writes `text` at `path` as OpenCode does (0600), replacing what is there in one rename.
        func write(_ text: String, at path: String) throws {
            let temporary = path + ".new"
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            #expect(chmod(temporary, 0o600) == 0)
            #expect(rename(temporary, path) == 0)
        }
    }

    /// `home up` without port flags (so it reads OpenCode's files), in `directories`' environment.
    static func homeUp(
        _ fixture: TunnelFixture, remotePort: Int, directories: ServiceDirectories, launcher: [String] = [],
        extra: [String] = []
    ) throws -> RunningProcess {
        let command =
            launcher + ["/usr/bin/env"]
            + directories.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            + [
                octunnelBinary, "home", "up", "--home", fixture.home.path, fixture.target, "--remote-port",
                String(remotePort),
                "--connect-timeout", "10",
            ] + extra
        return try RunningProcess(command[0], Array(command.dropFirst()))
    }

    /// A host on the home's LAN: it records every connection and every byte it is sent.
    static let lanHost = """
        import socket, sys
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 0)); s.listen(16)
        print("LISTENING", s.getsockname()[1], flush=True)
        log = open(sys.argv[2], "ab")
        while True:
            c, _ = s.accept(); c.settimeout(2)
            try:
                log.write(b"CONNECTION\\n" + c.recv(65536) + b"\\n"); log.flush()
                c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 3\\r\\nConnection: close\\r\\n\\r\\nLAN")
            except Exception:
                pass
            c.close()
        """

    /// Waits for `process`'s line containing `key` (hang guard 20 s) and expects it to say `words`.
    static func expectSays(
        _ process: RunningProcess, _ key: String, _ words: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let line = try await offPool { process.waitForLine(containing: key) }
        #expect(line?.contains(words) == true, "\(process.stderrText)", sourceLocation: sourceLocation)
    }

    /// A GET of `path` on 127.0.0.1:`port` inside the namespace `launcher` enters, by python3.
    static func get(port: Int, path: String, launcher: [String]) throws -> String {
        let script = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
            s.sendall(b"GET " + sys.argv[2].encode() + b" HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            sys.stdout.write(data.decode("utf-8", "replace"))
            """
        let command = launcher + [python3, "-c", script, String(port), path]
        return try run(command[0], Array(command.dropFirst())).stdout
    }

    @Test(
        "a registration naming a host on the home's LAN (a namespace of the test's own): named, not used, nothing forwarded there, no password sent, also when rewritten while home up runs"
    )
    func registrationOffHost() async throws {
        let net = try await namespacesOrSkip("registrationOffHost") { try NetworkNamespacePair() }
        defer { net.remove() }
        // The home is the pair's client namespace; the VPS (sshd) and the LAN host its server namespace.
        let directories = try ServiceDirectories()
        let trapLog = directories.scratch.file("lan.log")
        let lan = try RunningProcess(
            net.exec(.server)[0],
            Array(net.exec(.server).dropFirst()) + [python3, "-c", Self.lanHost, net.serverAddress, trapLog])
        defer { lan.stopGracefullyOrKill() }
        let trapPort = try #require(
            lan.waitForLine(containing: "LISTENING", stdout: true).flatMap { Int($0.split(separator: " ").last ?? "") },
            "\(lan.stderrText)")
        let backend = try OpenCodeStandIn(
            flavor: "opencode2", password: "settings-secret-pw", launcher: net.exec(.client))
        defer { backend.stop() }
        try directories.write(#"{"port":\#(backend.port),"password":"settings-secret-pw"}"#, at: directories.settings)
        try directories.write(
            #"{"url":"http://\#(net.serverAddress):\#(trapPort)","pid":\#(getpid()),"password":"registration-pw"}"#,
            at: directories.registration)
        let fixture = try await offPool {
            try TunnelFixture(sshdAddress: net.serverAddress, sshdLauncher: net.exec(.server))
        }
        defer { fixture.sshd.stop(hard: true) }
        let remotePort = freePort()
        let home = try Self.homeUp(
            fixture, remotePort: remotePort, directories: directories, launcher: net.exec(.client))
        defer { home.stopGracefullyOrKill() }

        try await Self.expectSays(
            home, "not a loopback address",
            "OpenCode's service file \(directories.registration) names \(net.serverAddress):\(trapPort), not a loopback address: not used"
        )
        let listening = try await offPool { home.homeListening() }
        #expect(listening?.contains("home 127.0.0.1:\(backend.port)") == true, "\(home.stderrText)")
        let answer = try await offPool {
            try Self.get(port: remotePort, path: "/api/info", launcher: net.exec(.server))
        }
        #expect(OpenCodeServiceTests.answeredByOpenCode2(answer), "\(answer)\n\(home.stderrText)")

        // Rewritten while home up runs: the follower reads the files again (at most once a
        // second, so the requests span more than that) and is not moved either.
        try directories.write(
            #"{"url":"http://\#(net.serverAddress):\#(trapPort)","pid":\#(getpid()),"password":"rewritten-pw"}"#,
            at: directories.registration)
        let started = Date()
        while Date().timeIntervalSince(started) < 3 {
            let again = try await offPool {
                try Self.get(port: remotePort, path: "/api/info", launcher: net.exec(.server))
            }
            #expect(OpenCodeServiceTests.answeredByOpenCode2(again), "\(again)\n\(home.stderrText)")
            // requests spread over the follower's 1 s, not a synchronisation
            try await Task.sleep(nanoseconds: 200_000_000)
        }
        home.stopGracefullyOrKill()
        let trapped = (try? String(contentsOfFile: trapLog, encoding: .utf8)) ?? ""
        #expect(trapped.isEmpty, "the LAN host was reached: \(trapped)")
        #expect(!home.stderrText.contains("moved from"), "\(home.stderrText)")
        for secret in ["settings-secret-pw", "registration-pw", "rewritten-pw"] {
            #expect(!home.stderrText.contains(secret))
        }
    }

    @Test(
        "a FIFO in the registration's place blocks nothing: every forward serves while it sits there (the re-read is off the loop), home status answers; a home up started with it there names it and serves; a symbolic link there is not followed"
    )
    func fifoAndLink() async throws {
        let directories = try ServiceDirectories()
        let service = try OpenCodeStandIn(flavor: "opencode2", service: "latest", environment: directories.environment)
        defer { service.stop() }
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let home = try Self.homeUp(fixture, remotePort: remotePort, directories: directories)
        defer { home.stopGracefullyOrKill() }
        let found = try await offPool { home.waitForLine(containing: "home: OpenCode 2's background service") }
        #expect(found?.contains("at 127.0.0.1:\(service.port)") == true, "\(home.stderrText)")
        try #require(try await offPool { home.homeListening() } != nil, "\(home.stderrText)")
        #expect(
            OpenCodeServiceTests.answeredByOpenCode2(try await offPool { httpGet(port: remotePort, path: "/api/info") })
        )

        let fifo = directories.scratch.file("state/opencode/fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(rename(fifo, directories.registration) == 0)
        let swapped = Date()
        var served = 0
        while Date().timeIntervalSince(swapped) < 3 {
            let answer = try await offPool { httpGet(port: remotePort, path: "/api/info") }
            #expect(
                OpenCodeServiceTests.answeredByOpenCode2(answer),
                "request \(served + 1) with the FIFO there: \(answer ?? "no answer")\n\(home.stderrText)")
            served += 1
            // requests spread over the follower's 1 s, not a synchronisation
            try await Task.sleep(nanoseconds: 200_000_000)
        }
        let status = try await offPool { try fixture.run(["home", "status"]) }
        #expect(status.status == 0, "\(status.stderr)")
        #expect(!home.stderrText.contains("moved from"), "\(home.stderrText)")
        home.stopGracefullyOrKill()

        // Started with the FIFO there: named, and the settings' address is used (the port the
        // service was set to, `opencode service set port`).
        try directories.write(
            #"{"port":\#(service.port),"password":"\#(service.password ?? "")"}"#, at: directories.settings)
        let secondPort = freePort()
        let second = try Self.homeUp(fixture, remotePort: secondPort, directories: directories, extra: ["--no-health"])
        defer { second.stopGracefullyOrKill() }
        try await Self.expectSays(
            second, "is a FIFO",
            "OpenCode's service file \(directories.registration) is a FIFO, not a regular file: not used")
        try #require(try await offPool { second.homeListening() } != nil, "\(second.stderrText)")
        #expect(
            OpenCodeServiceTests.answeredByOpenCode2(try await offPool { httpGet(port: secondPort, path: "/api/info") })
        )
        second.stopGracefullyOrKill()

        // A link to a file anyone may write, of another user, naming another port: not followed.
        let planted = directories.scratch.file("planted.json")
        try #"{"url":"http://127.0.0.1:1","pid":\#(getpid()),"password":"planted-pw"}"#.write(
            toFile: planted, atomically: false, encoding: .utf8)
        #expect(chmod(planted, 0o666) == 0 && chown(planted, 65534, 65534) == 0)
        #expect(unlink(directories.registration) == 0 && symlink(planted, directories.registration) == 0)
        let third = try Self.homeUp(fixture, remotePort: secondPort, directories: directories, extra: ["--no-health"])
        defer { third.stopGracefullyOrKill() }
        try await Self.expectSays(
            third, "symbolic link",
            "OpenCode's service file \(directories.registration) is a symbolic link: not followed, not used")
        let listening = try await offPool { third.homeListening() }
        #expect(
            listening?.contains("home 127.0.0.1:\(service.port)") == true, "the settings' address: \(third.stderrText)")
    }

    @Test(
        "the pair port is OpenCode's or the user's: /api/info naming another port is said and not listened on; --pair-port N listens on N whatever it names"
    )
    func pairPortNotTheFarSidesChoice() async throws {
        let backend = try OpenCodeStandIn(flavor: "opencode2", password: "pair-secret")
        defer { backend.stop() }
        let fixture = try TunnelFixture()
        let (home, remotePort) = try await fixture.homeUpListening(homePort: backend.port, extra: ["--no-health"])
        defer { home.stopGracefullyOrKill() }
        let environment = inheritedEnvironment.merging(["OPENCODE_PASSWORD": "pair-secret"]) { $1 }

        let laptop = try fixture.up(remotePort: remotePort, extra: ["--no-notify"], environment: environment)
        defer { laptop.stopGracefullyOrKill() }
        try await Self.expectSays(
            laptop, "pair links from home",
            "pair links from home name port \(backend.port), which is not one of OpenCode 2's own service ports (49374, 49375, 4096): not listened on"
        )
        laptop.stopGracefullyOrKill()

        let chosen = freePort()
        let given = try fixture.up(
            remotePort: remotePort, extra: ["--no-notify", "--pair-port", String(chosen)], environment: environment)
        defer { given.stopGracefullyOrKill() }
        let open = try await offPool { given.waitForLine(containing: "pair links from home") }
        #expect(
            open
                == "pair links from home open here: http://127.0.0.1:\(chosen)/auth/connect/… (the port you gave with --pair-port; --no-pair-port turns this off)",
            "\(given.stderrText)")
        #expect(
            OpenCodeServiceTests.answeredByOpenCode2(try await offPool { httpGet(port: chosen, path: "/api/info") }))

        let low = try fixture.run(["tunnel", "up", fixture.target, "--pair-port", "80"])
        #expect(low.status == 64 && low.stderr.contains("--pair-port 80 is below 1024"), "\(low.stderr)")
    }

    @Test(
        "hosts in key lines: pubkey refuses exactly what home up and tunnel up refuse, over a generated table of forward specs (~, format and bidi characters, names, a port twice, LAN listens with and without --allow-lan); ~ and U+202E named with exit 64"
    )
    func pubkeyAgreesWithUp() throws {
        let home = try TempDirectory("octunnel-agree")
        let made = try run(octunnelBinary, ["keygen", "--home", home.path])
        try #require(made.status == 0, "\(made.stderr)")
        // nothing listens: a spec that passes validation fails to connect, not with 64
        let nowhere = "root@127.0.0.1:\(freePort())"
        let environment = inheritedEnvironment.merging([
            "XDG_STATE_HOME": home.file("state"), "XDG_CONFIG_HOME": home.file("config"),
        ]) { $1 }
        @Sendable func exit(_ arguments: [String]) throws -> ProcessResult {
            try run(octunnelBinary, arguments + ["--home", home.path], environment: environment)
        }
        let port = freePort(), other = freePort()
        let listens = [
            "", "127.0.0.1:", "[::1]:", "localhost:", "LocalHost:", "0.0.0.0:", "~u:", "\u{202E}x:", "a\u{200B}b:",
            "127.example.com:", "example.invalid:",
        ]
        var table: [(direction: String, specs: [String], lan: Bool)] = []
        for direction in ["-R", "-L"] {
            let clash = direction == "-R" ? 18080 : 4096 // OpenCode's own listen at the defaults
            for listen in listens {
                for lan in [false, true] {
                    table.append((direction, ["\(listen)\(port):127.0.0.1:3000"], lan))
                }
                table.append((direction, ["\(listen)\(clash):127.0.0.1:3000"], false))
            }
            for target in ["127.0.0.1", "localhost", "~h", "h\u{202E}", "[::1]", "vps.example.com"] {
                table.append((direction, ["\(port):\(target):3000"], false))
            }
            table.append((direction, ["[::1]:\(port):127.0.0.1:3000", "127.0.0.1:\(port):127.0.0.1:3001"], false))
            table.append((direction, ["\(port):127.0.0.1:3000", "\(other):127.0.0.1:3000"], false))
        }
        // Side by side: each row is two short processes, most of their time spent starting.
        let rowsToRun = table
        let rows = Guarded([(disagreement: String?, refused: Bool)?](repeating: nil, count: table.count))
        let failures = Guarded([String]())
        DispatchQueue.concurrentPerform(iterations: table.count) { index in
            let (direction, specs, lan) = rowsToRun[index]
            let flags = specs.flatMap { [direction, $0] } + (lan ? ["--allow-lan"] : [])
            do {
                let pubkey = try exit(["pubkey", "--restrict"] + (direction == "-R" ? ["--listen"] : []) + flags)
                let up = try exit(
                    (direction == "-R"
                        ? ["home", "up", "--no-health"]
                        : ["tunnel", "up", "--no-health", "--no-notify", "--no-pair-port"])
                        + [nowhere, "--connect-timeout", "2"] + flags)
                let disagree = (pubkey.status == 64) != (up.status == 64) || (pubkey.status != 64 && pubkey.status != 0)
                let text =
                    "\(flags): pubkey \(pubkey.status) (\(pubkey.stderr.prefix(200))), up \(up.status) (\(up.stderr.prefix(200)))"
                rows.update { $0[index] = (disagree ? text : nil, pubkey.status == 64) }
            } catch {
                failures.update { $0.append("\(flags): \(error)") }
            }
        }
        #expect(failures.value.isEmpty, "\(failures.value)")
        let disagreements = rows.value.compactMap { $0?.disagreement }
        let refused = rows.value.filter { $0?.refused == true }.count
        #expect(
            disagreements.isEmpty,
            "\(disagreements.count) of \(table.count) specs:\n\(disagreements.joined(separator: "\n"))")
        #expect(
            refused > 10 && refused < table.count - 10,
            "the table holds both kinds: \(refused) of \(table.count) refused")

        let tilde = try exit(["pubkey", "--restrict", "--listen", "--remote-host", "~user"])
        #expect(
            tilde.status == 64 && tilde.stderr.contains(#"contains "~""#) && tilde.stdout.isEmpty, "\(tilde.stderr)")
        let bidi = try exit(["pubkey", "--restrict", "--listen", "-R", "127.0.0.1\u{202E}:18084:127.0.0.1:3000"])
        #expect(bidi.status == 64 && bidi.stderr.contains("U+202E") && bidi.stdout.isEmpty, "\(bidi.stderr)")
        let line = try exit(["pubkey", "--restrict", "--listen", "-R", "localhost:18084:127.0.0.1:3000"])
        #expect(
            line.status == 0 && line.stdout.contains(#"W=\"localhost:18084\""#),
            "the forced command quotes each listen: \(line.stdout)")
    }
}

/// A value the table's rows write from several threads, under a lock.
private final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func update(_ change: (inout Value) -> Void) { lock.lock(); change(&stored); lock.unlock() }
}
