import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// What a hostile home can make `tunnel up`'s notifications cost (issue 48), through a real sshd
/// and the stand-in: a flood of requests runs at most four programs at once and merges the rest
/// while the tunnel serves; the password planted in the agent's words shows on no surface; the
/// program's whole process group goes at its time limit and at exit.
@Suite("notifications bounded whatever the home sends", .ownThreads, .timeLimit(.minutes(4)))
struct NotifyBoundsTests {
    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Whether `pid` is gone (or a zombie nobody reaped yet: dead all the same).
    static func isGone(_ pid: Int) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }

    /// `tunnel up` against a 2.x stand-in with `password`, following its events, with `extra` flags.
    static func up(
        _ fixture: TunnelFixture, _ backend: OpenCodeStandIn, password: String, extra: [String],
        environment: [String: String] = [:]
    ) throws -> RunningProcess {
        try fixture.up(
            remotePort: backend.port, extra: ["--no-pair-port"] + extra,
            environment: inheritedEnvironment.merging(["OPENCODE_PASSWORD": password]) { $1 }.merging(environment) {
                $1
            })
    }

    @Test(
        "200 distinct permission requests and a --notify-command that takes 2 s: at most 4 run at once, the rest are merged into \"+N more permissions asked in Fix the login bug\" (every request counted once), the tunnel serves throughout, and the command's environment has no OPENCODE_PASSWORD"
    )
    func flood() async throws {
        try await NotifyTests.withStandIn { backend, password, fixture, scratch in
            let log = scratch.file("log")
            try scratch.write(
                "slow.sh",
                "#!/bin/sh\necho start >> '\(log)'\nenv > '\(scratch.file("env"))'\nsleep 2\necho end >> '\(log)'\n",
                mode: 0o755)
            let tunnel = try Self.up(
                fixture, backend, password: password, extra: ["--notify-command", scratch.file("slow.sh")])
            defer { tunnel.stopGracefullyOrKill() }
            let port = try #require(try await offPool { tunnel.forwardedPort() }, "\(tunnel.stderrText)")
            try await NotifyTests.requireFollowing(backend, tunnel)
            #expect(
                NotifyTests.emit(
                    backend,
                    StandInEvent.session("s1", "session.updated", ["info": ["id": "s1", "title": "Fix the login bug"]]))
                    == 1)

            let served = try await offPool { () -> [Bool] in
                var served: [Bool] = []
                for request in 0..<200 {
                    _ = NotifyTests.emit(
                        backend,
                        StandInEvent.session(
                            "s1", "permission.asked",
                            [
                                "id": "per_\(request)", "permission": "bash",
                                "patterns": ["make \(request)"],
                            ]))
                    if request % 20 == 0 {
                        served.append(httpGet(port: port, path: "/")?.hasPrefix("HTTP/1.1 200") == true)
                    }
                }
                return served
            }
            #expect(served.allSatisfy { $0 } && served.count == 10, "\(served)")
            let counted = try await offPool { () -> Int in
                var counted = 0
                _ = waitUntil(timeout: 60) {
                    let told = tunnel.stderr.filter { $0.hasPrefix("notify: ") }
                    counted = told.reduce(0) { sum, line in
                        guard let more = line.range(of: ": +") else { return sum + 1 }
                        return sum + (Int(line[more.upperBound...].prefix { $0.isNumber }) ?? 0)
                    }
                    return counted >= 200 && Self.lines(log).filter { $0 == "end" }.count == told.count
                }
                return counted
            }
            #expect(counted == 200, "\(tunnel.stderrText)")
            #expect(tunnel.stderrText.contains("more permissions asked in Fix the login bug"), "\(tunnel.stderrText)")
            var running = 0, most = 0
            for line in Self.lines(log) {
                running += line == "start" ? 1 : -1
                most = max(most, running)
            }
            #expect(most <= 4 && most >= 2, "at most 4 at once: \(most)")
            let environment = Self.lines(scratch.file("env"))
            #expect(
                !environment.contains { $0.hasPrefix("OPENCODE_") }
                    && environment.contains("OCTUNNEL_EVENT=permission"), "\(environment)")
            #expect(!environment.joined().contains(password))
            #expect(httpGet(port: port, path: "/")?.hasPrefix("HTTP/1.1 200") == true)
            #expect(tunnel.isRunning)
            // None was answered: tunnel status says all 200 wait; one answer elsewhere, 199.
            @Sendable func waiting() throws -> Int? {
                let status = try fixture.run(["tunnel", "status", "--json"])
                return (try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?[
                    "permissionsWaiting"] as? Int
            }
            #expect(try await offPool { try waiting() } == 200)
            #expect(
                NotifyTests.emit(
                    backend, StandInEvent.session("s1", "permission.replied", ["requestID": "per_7", "reply": "once"]))
                    == 1)
            #expect(try await offPool { waitUntil(timeout: 10) { (try? waiting()) == 199 } })
            let human = try await offPool { try fixture.run(["tunnel", "status"]) }
            #expect(human.stdout.contains("waiting     199 for an answer"), "\(human.stdout)")
        }
    }

    @Test(
        "the password and its Basic token planted in a title, an error's message, a permission's pattern and a question: on stderr, in tunnel status (text and JSON), in the command's environment and on the desktop (dunst), only ***"
    )
    func plantedPassword() async throws {
        let password = "pw-\(UUID().uuidString.prefix(12))"
        let token = Data("opencode:\(password)".utf8).base64EncodedString()
        let desktop = try DesktopSession()
        defer { desktop.stop() }
        let backend = try OpenCodeStandIn(flavor: "opencode2", password: password)
        defer { backend.stop() }
        let fixture = try TunnelFixture()
        let scratch = try TempDirectory()
        try scratch.write("env.sh", "#!/bin/sh\nenv > '\(scratch.file("env"))'-$$\n", mode: 0o755)
        let tunnel = try Self.up(
            fixture, backend, password: password, extra: ["--notify-command", scratch.file("env.sh")],
            environment: desktop.environment)
        defer { tunnel.stopGracefullyOrKill() }
        try await NotifyTests.requireFollowing(backend, tunnel)
        for event in [
            StandInEvent.session(
                "s1", "session.updated",
                ["info": ["id": "s1", "title": "Rotate \(password) today", "directory": "/home/me/shop"]]),
            StandInEvent.status("s1", "busy"),
            StandInEvent.session(
                "s1", "permission.asked",
                [
                    "id": "per_1", "permission": "bash",
                    "patterns": ["curl -u opencode:\(password) https://push.example", "echo \(token)"],
                ]),
            StandInEvent.session(
                "s1", "question.asked", ["id": "que_1", "questions": [["question": "Send Basic \(token)?"]]]),
            StandInEvent.failure("s2", "401 for opencode:\(password)"),
        ] {
            #expect(NotifyTests.emit(backend, event) == 1)
        }
        let files = try await offPool { () -> [String] in
            _ = waitUntil(timeout: 20) {
                ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).filter {
                    $0.hasPrefix("env-")
                }.count == 3
                    && desktop.shown.count == 3
            }
            return ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).filter {
                $0.hasPrefix("env-")
            }
        }
        #expect(files.count == 3 && desktop.shown.count == 3, "\(files) \(desktop.shown) \(tunnel.stderrText)")
        let environments = files.map { (try? String(contentsOfFile: scratch.file($0), encoding: .utf8)) ?? "" }
        let status = try await offPool { try fixture.run(["tunnel", "status"]) }
        let json = try await offPool { try fixture.run(["tunnel", "status", "--json"]) }
        #expect(status.stdout.components(separatedBy: "notified").count - 1 == 3, "\(status.stdout)")
        #expect(
            tunnel.stderrText.contains(
                "notify: OpenCode asks for permission: Rotate *** today (shop): bash: curl -u opencode:*** https://push.example, echo ***"
            ),
            "\(tunnel.stderrText)")
        let surfaces =
            [tunnel.stderrText, status.stdout, json.stdout] + environments
            + desktop.shown.map { $0.summary + "\n" + $0.body }
        for surface in surfaces {
            #expect(!surface.contains(password) && !surface.contains(token), "\(surface)")
        }
    }

    /// The resident memory of `pid` now, in KiB.
    static func residentKilobytes(_ pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test(
        "50 session.updated with 900 KB titles (45 MB through the tunnel): tunnel up's resident memory grows by less than 10 MB, and the next moment names its session by a title cut to a few hundred bytes"
    )
    func bigTitles() async throws {
        try await NotifyTests.withStandIn { backend, password, fixture, _ in
            let tunnel = try Self.up(fixture, backend, password: password, extra: [])
            defer { tunnel.stopGracefullyOrKill() }
            try await NotifyTests.requireFollowing(backend, tunnel)
            let before = Self.residentKilobytes(tunnel.pid)
            let big = String(repeating: "t", count: 900_000)
            try await offPool {
                for index in 0..<50 {
                    _ = NotifyTests.emit(
                        backend,
                        StandInEvent.session(
                            "big\(index)", "session.updated",
                            ["info": ["id": "big\(index)", "title": "\(index) \(big)"]]))
                }
            }
            // Read up to here once the failure sent last is told.
            #expect(
                NotifyTests.emit(backend, StandInEvent.failure("big49", "last")) == 1)
            let line = try #require(
                try await offPool { tunnel.waitForLine(containing: "notify: OpenCode failed: 49 ttt", timeout: 180) },
                "\(tunnel.stderrText)")
            let after = Self.residentKilobytes(tunnel.pid)
            #expect(after - before < 10 * 1024, "RSS \(before) → \(after) KiB")
            #expect(line.utf8.count < 600 && line.contains("…"), "\(line.prefix(300))")
            #expect(tunnel.isRunning)
        }
    }

    @Test(
        "the command's whole process group is killed at its time limit (a `sleep 40` it started too), and at exit a command still running is ended with its group"
    )
    func processGroup() async throws {
        try await NotifyTests.withStandIn { backend, password, fixture, scratch in
            for (timeout, pidFile) in [("1", "at-limit"), ("60", "at-exit")] {
                try scratch.write(
                    "hang-\(pidFile).sh", "#!/bin/sh\nsleep 40 &\necho $! > '\(scratch.file(pidFile))'\nwait\n",
                    mode: 0o755)
                let tunnel = try Self.up(
                    fixture, backend, password: password,
                    extra: ["--notify-command", scratch.file("hang-\(pidFile).sh"), "--notify-timeout", timeout])
                defer { tunnel.stopGracefullyOrKill() }
                try await NotifyTests.requireFollowing(backend, tunnel)
                #expect(
                    NotifyTests.emit(backend, StandInEvent.failure("s1", "boom")) == 1)
                let pid = try #require(
                    try await offPool { () -> Int? in
                        _ = waitUntil(timeout: 20) { Int(Self.lines(scratch.file(pidFile)).first ?? "") != nil }
                        return Int(Self.lines(scratch.file(pidFile)).first ?? "")
                    }, "\(tunnel.stderrText)")
                if timeout == "1" {
                    #expect(
                        try await offPool { tunnel.waitForLine(containing: "ran longer than 1 s and was stopped") }
                            != nil, "\(tunnel.stderrText)")
                } else {
                    tunnel.signal(SIGINT)
                    #expect(try await offPool { tunnel.waitForExit(timeout: 10) } != nil, "\(tunnel.stderrText)")
                }
                #expect(
                    try await offPool { waitUntil(timeout: 10) { Self.isGone(pid) } },
                    "the command's child \(pid) lives on (\(pidFile))")
            }
        }
    }
}
