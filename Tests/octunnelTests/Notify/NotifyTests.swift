import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `tunnel up` follows OpenCode's event stream through the tunnel and says when the agent
/// finished, asks for permission or failed (issue 40), through a real sshd, the stand-in sending
/// OpenCode's events as each version shapes them.
@Suite("notifications: the agent finished, asks, failed", .ownThreads, .timeLimit(.minutes(3)))
struct NotifyTests {
    /// POSTs `event` to the stand-in's test route; how many streams got it.
    static func emit(_ backend: OpenCodeStandIn, _ event: [String: Any]) -> Int {
        let body = (try? JSONSerialization.data(withJSONObject: event)) ?? Data()
        let fd = connectLoopback(backend.port)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        setSocketTimeout(fd, seconds: 10)
        let head =
            "POST /standin/emit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard writeAll(fd, Array(head.utf8) + [UInt8](body)) else { return -1 }
        let answer = String(decoding: readAll(fd), as: UTF8.self)
        guard let start = answer.range(of: "{\"streams\":") else { return -1 }
        return Int(answer[start.upperBound...].prefix { $0.isNumber }) ?? -1
    }

    /// Waits until the follower says it follows the stream, then until exactly one stream listens
    /// at the stand-in: the follower's (the health test's own closes through sshd a little later,
    /// and the stand-in stops counting a closed one).
    static func followerListens(_ backend: OpenCodeStandIn, _ tunnel: RunningProcess) -> Bool {
        tunnel.waitForLine(containing: "notifications: following OpenCode's events") != nil
            && waitUntil(timeout: 20) { emit(backend, ["type": "server.ping", "fields": [:]]) == 1 }
    }

    /// A stand-in of `flavor` (2.x unless given) behind a fresh password, a sshd fixture to reach it and a scratch
    /// directory; the stand-in is stopped after `body`.
    static func withStandIn(
        flavor: String = "opencode2",
        _ body: (_ backend: OpenCodeStandIn, _ password: String, _ fixture: TunnelFixture, _ scratch: TempDirectory)
            async throws -> Void
    )
        async throws
    {
        let (backend, password) = try OpenCodeStandIn.withFreshPassword(flavor: flavor)
        defer { backend.stop() }
        let fixture = try TunnelFixture()
        try await body(backend, password, fixture, try TempDirectory())
    }

    /// Waits until `tunnel` passed its health test and its follower listens at `backend`: where a
    /// test of the moments starts sending events.
    static func requireFollowing(
        _ backend: OpenCodeStandIn, _ tunnel: RunningProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try #require(
            try await offPool { tunnel.waitForLine(containing: "health ✓") } != nil, "\(tunnel.stderrText)",
            sourceLocation: sourceLocation)
        try #require(
            try await offPool { followerListens(backend, tunnel) }, "\(tunnel.stderrText)",
            sourceLocation: sourceLocation)
    }

    /// `status` (`tunnel status --json` or `home status --json`) run beside the running end: its JSON, and the
    /// kinds of the notifications it keeps, sorted.
    static func statusKinds(
        _ fixture: TunnelFixture, _ status: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (object: [String: Any], kinds: [String]) {
        let result = try await offPool { try fixture.run(status) }
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)",
            sourceLocation: sourceLocation)
        let told = try #require(
            object["notifications"] as? [[String: Any]], "\(result.stdout)", sourceLocation: sourceLocation)
        return (object, told.compactMap { $0["kind"] as? String }.sorted())
    }

    /// A program that appends its OCTUNNEL_ variables, one record a line, to `file`.
    static func recorder(
        in directory: TempDirectory, file: String, exit code: Int = 0, sleep seconds: Int = 0
    ) throws -> String {
        // Written close-on-exec (TempDirectory.write): Foundation's write leaves its descriptor open
        // to any child another test spawns meanwhile, and exec of a file open for writing is
        // ETXTBSY (CI, 2026-11-26 05:05: "--notify-command … could not start: … Text file busy").
        let name = "notify-\(code)-\(seconds).sh"
        try directory.write(
            name,
            """
            #!/bin/sh
            \(seconds > 0 ? "sleep \(seconds)" : "")
            printf '%s|%s|%s|%s\\n' "$OCTUNNEL_EVENT" "$OCTUNNEL_SESSION_TITLE" "$OCTUNNEL_MESSAGE" "$OCTUNNEL_DIRECTORY" >> '\(file)'
            exit \(code)
            """, mode: 0o755)
        return directory.file(name)
    }

    @Test(
        "OpenCode 2: finished, permission and failed each once, on stderr and through --notify-command with the facts in its environment; a title of escape codes shown escaped; events of a session that was never seen busy notify nothing",
        .timeLimit(.minutes(2)))
    func threeMoments() async throws {
        try await Self.withStandIn { backend, password, fixture, scratch in
            let record = scratch.file("record")
            let tunnel = try RunningProcess(
                octunnelBinary,
                [
                    "tunnel", "up", "--home", fixture.home.path, fixture.target, "--local-port", "0",
                    "--remote-port", String(backend.port), "--connect-timeout", "10", "--no-pair-port", "--verbose",
                    "--notify-command", try Self.recorder(in: scratch, file: record),
                ],
                environment: inheritedEnvironment.merging(["OPENCODE_PASSWORD": password]) { $1 })
            // --verbose: should a moment be missing, the connection lines say whether the follower's stream was cut and opened again.
            defer { tunnel.stopGracefullyOrKill() }
            // The follower's stream is open once the stand-in counts two (the health test's has closed).
            try await Self.requireFollowing(backend, tunnel)

            for event in [
                StandInEvent.status("s0", "idle"), StandInEvent.session("s0", "session.idle"),
                StandInEvent.session(
                    "s1", "session.updated",
                    [
                        "info": [
                            "id": "s1", "title": "Fix \u{1b}[31mlogin\u{1b}]0;x\u{07}", "directory": "/home/me/shop",
                        ]
                    ]),
                StandInEvent.status("s1", "busy"),
                StandInEvent.session(
                    "s1", "permission.asked", ["id": "per_1", "permission": "bash", "patterns": ["git push"]]),
                StandInEvent.session(
                    "s1", "permission.asked", ["id": "per_1", "permission": "bash", "patterns": ["git push"]]),
                StandInEvent.status("s1", "idle"), StandInEvent.session("s1", "session.idle"),
                StandInEvent.failure("s2", "rate limited"),
            ] {
                #expect(Self.emit(backend, event) == 1)
            }
            let lines = try await offPool { () -> [String] in
                _ = waitUntil(timeout: 20) {
                    (try? String(contentsOfFile: record, encoding: .utf8))?.split(separator: "\n").count ?? 0 >= 3
                }
                return tunnel.stderr.filter { $0.contains("notify: ") }
            }
            #expect(lines.count == 3, "\(tunnel.stderrText)")
            #expect(
                lines.contains {
                    $0.contains("notify: OpenCode asks for permission: Fix \\x1b[31mlogin")
                        && $0.hasSuffix(": bash: git push · answer: octunnel permission allow|always|reject per_1")
                }, "\(lines)")
            #expect(
                lines.contains {
                    $0.contains("notify: OpenCode finished: Fix ")
                        && $0.contains("(shop): the agent is done and waits for you")
                }, "\(lines)")
            #expect(lines.contains { $0.hasSuffix("notify: OpenCode failed: s2: APIError: rate limited") }, "\(lines)")
            let records = ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
            #expect(
                records.map { $0.split(separator: "|").first.map(String.init) ?? "" }.sorted() == [
                    "failed", "finished", "permission",
                ],
                "\(records) \(tunnel.stderrText)")
            #expect(records.allSatisfy { !$0.contains("\u{1b}") && !$0.contains("\u{07}") }, "\(records)")
            #expect(
                records.contains(
                    "finished|Fix \\x1b[31mlogin\\x1b]0;x\\x07|the agent is done and waits for you|/home/me/shop"),
                "\(records)")
            // status: the last three, newest last.
            let status = try await Self.statusKinds(fixture, ["tunnel", "status", "--json"])
            #expect(status.kinds == ["failed", "finished", "permission"], "\(status.object)")
            let human = try await offPool { try fixture.run(["tunnel", "status"]) }
            #expect(human.stdout.components(separatedBy: "notified").count - 1 == 3, "\(human.stdout)")
        }
    }

    @Test(
        "a --notify-command that fails or hangs is reported and never fatal; OpenCode 1.x's /global/event is followed the same way; --no-notify follows nothing"
    )
    func commandFailsOrHangs() async throws {
        let fixture = try TunnelFixture()
        let scratch = try TempDirectory()
        for (code, sleep, said) in [(3, 0, "exited 3"), (0, 30, "ran longer than 1 s and was stopped")] {
            let backend = try OpenCodeStandIn(flavor: "opencode1")
            defer { backend.stop() }
            let tunnel = try fixture.up(
                remotePort: backend.port,
                extra: [
                    "--notify-command",
                    try Self.recorder(in: scratch, file: scratch.file("r"), exit: code, sleep: sleep),
                    "--notify-timeout", "1",
                ])
            defer { tunnel.stopGracefullyOrKill() }
            try await Self.requireFollowing(backend, tunnel)
            _ = Self.emit(backend, StandInEvent.failure("x", "boom", name: "UnknownError"))
            let line = try await offPool { tunnel.waitForLine(containing: "--notify-command") }
            #expect(line?.contains(said) == true, "\(tunnel.stderrText)")
            #expect(
                tunnel.stderrText.contains("notify: OpenCode failed: x (project): UnknownError: boom"),
                "\(tunnel.stderrText)")
            #expect(tunnel.isRunning)
        }
        let backend = try OpenCodeStandIn(flavor: "opencode1")
        defer { backend.stop() }
        let quiet = try fixture.up(remotePort: backend.port, extra: ["--no-notify"])
        defer { quiet.stopGracefullyOrKill() }
        try #require(try await offPool { quiet.waitForLine(containing: "health ✓") } != nil, "\(quiet.stderrText)")
        // The health test's own stream goes; no other comes in the second after (the follower would have come at once).
        #expect(waitUntil(timeout: 10) { Self.emit(backend, ["type": "server.ping", "fields": [:]]) == 0 })
        #expect(!waitUntil(timeout: 1) { Self.emit(backend, ["type": "server.ping", "fields": [:]]) != 0 })
    }

    @Test(
        "on a desktop: a real session bus and notification server (dunst) are sent each of the three moments of OpenCode 1.x, once, as octunnel's, permission and failed critical; markup, backslashes and escape codes in the agent's words arrive as text, never as markup or a control byte"
    )
    func desktop() async throws {
        let desktop = try DesktopSession()
        defer { desktop.stop() }
        let backend = try OpenCodeStandIn(flavor: "opencode1")
        defer { backend.stop() }
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(
            remotePort: backend.port, environment: inheritedEnvironment.merging(desktop.environment) { $1 })
        defer { tunnel.stopGracefullyOrKill() }
        try await Self.requireFollowing(backend, tunnel)

        let title = "Shop <b>cart</b> & \u{1b}[31mred"
        for event in [
            StandInEvent.session(
                "d1", "session.updated", ["info": ["id": "d1", "title": title, "directory": "/home/me/shop"]]),
            StandInEvent.status("d1", "busy"),
            StandInEvent.session(
                "d1", "permission.updated", ["id": "per_d", "type": "bash", "title": "rm -rf <build> && echo \\033[2J"]),
            StandInEvent.status("d1", "idle"), StandInEvent.session("d1", "session.idle"),
            StandInEvent.failure("d2", "key <expired> \\n & \u{07}", name: "ProviderAuthError"),
        ] {
            #expect(Self.emit(backend, event) == 1)
        }
        let shown = try await offPool { () -> [DesktopSession.Shown] in
            _ = waitUntil(timeout: 20) { desktop.shown.count >= 3 }
            return desktop.shown
        }
        #expect(shown.count == 3, "\(shown) \(tunnel.stderrText)")
        #expect(shown.allSatisfy { $0.appName == "octunnel" }, "\(shown)")
        // 1.x's /global/event names the project directory around each event (the stand-in's "project").
        let named = "Shop <b>cart</b> & \\x1b[31mred (project)"
        let expected = [
            ("OpenCode asks for permission: \(named)", "rm -rf &lt;build&gt; &amp;&amp; echo \\033[2J", "CRITICAL"),
            ("OpenCode finished: \(named)", "the agent is done and waits for you", "NORMAL"),
            ("OpenCode failed: d2 (project)", "ProviderAuthError: key &lt;expired&gt; \\n &amp; \\x07", "CRITICAL"),
        ]
        for (summary, body, urgency) in expected {
            let one = DesktopSession.Shown(appName: "octunnel", summary: summary, body: body, urgency: urgency)
            #expect(shown.contains(one), "\(one) among \(shown)")
        }
        #expect(
            shown.allSatisfy { !($0.summary + $0.body).contains { $0.asciiValue.map { $0 < 0x20 } == true } },
            "\(shown)")
    }
}
