import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48's goal, "answer the agent where you are told, and miss nothing while you were away",
/// through a real sshd and the OpenCode stand-in, for OpenCode 1.x and 2.x: the VPS goes down
/// (sshd and its sessions killed) for 3 s in CI, the issue's 60 s by hand
/// (`scripts/soak.sh --long-tests`, `TestLengths`) while the agent asks for permission twice and a session seen working finishes; all
/// three are told once as the tunnel is back (the delay from the tunnel's "connected to" line is
/// printed), then ten cuts more with nothing new tell nothing twice. And what already waited
/// when `tunnel up` started is told once.
@Suite("notifications: a cut hides nothing, and nothing is told twice", .ownThreads, .timeLimit(.minutes(6)))
struct NotifyCutTests {
    /// The cut's length: the issue's 60 s by hand, 3 s in CI.
    static var cutSeconds: Double { TestLengths.seconds(field: 60, short: 3) }

    /// A session's start and end of a turn, in the flavour's events: 1.x session.status busy /
    /// idle, 2.x session.execution.started / succeeded.
    static func turn(_ session: String, ends: Bool, flavor: String) -> [String: Any] {
        flavor == "opencode1"
            ? NotifyTests.session(session, "session.status", ["status": ["type": ends ? "idle" : "busy"]])
            : NotifyTests.session(session, ends ? "session.execution.succeeded" : "session.execution.started")
    }

    /// `tunnel reconnect`, then waits for the follower's stream to be back (a peer the stand-in
    /// has not seen among `peers`); the peers seen now, or nil if it did not come back.
    static func reconnect(
        _ fixture: TunnelFixture, _ backend: OpenCodeStandIn, after peers: Set<String>
    ) throws -> Set<String>? {
        let cut = try fixture.run(["tunnel", "reconnect", "--wait", "30"])
        guard cut.status == 0 else { return nil }
        var now = peers
        let back = waitUntil(timeout: 30) {
            now = Set(NotifyCatchUpTests.peers(backend))
            return !now.subtracting(peers).isEmpty
        }
        return back ? peers.union(now) : nil
    }

    @Test(
        "the VPS down while the agent asks twice and a session seen working finishes: all three told once as the tunnel is back; ten cuts more with nothing new: none told twice",
        arguments: ["opencode1", "opencode2"])
    func cutHidesNothing(flavor: String) async throws {
        try await NotifyCatchUpTests.withRecordingTunnel(flavor: flavor) { backend, password, fixture, tunnel, record in
            // ses_b is seen working before the cut (seen once the live request after it is told: one stream, in order).
            #expect(NotifyTests.emit(backend, Self.turn("ses_b", ends: false, flavor: flavor)) == 1)
            let live = try #require(backend.askPermission(session: "ses_a", patterns: ["make live"]))
            try #require(
                try await offPool { waitUntil(timeout: 20) { NotifyCatchUpTests.records(record).count == 1 } },
                "\(tunnel.stderrText)")

            try await offPool { fixture.sshd.stop(hard: true) }
            try #require(
                try await offPool {
                    waitUntil(timeout: 20) {
                        NotifyTests.emit(backend, ["type": "server.ping", "fields": [String: Any]()]) == 0
                    }
                },
                "the follower's stream outlived the VPS")
            let cutAt = Date()
            let (first, heardFirst) = try #require(NotifyCatchUpTests.ask(backend, "make first", emit: true))
            #expect(NotifyTests.emit(backend, Self.turn("ses_b", ends: true, flavor: flavor)) == 0)
            let (second, heardSecond) = try #require(NotifyCatchUpTests.ask(backend, "make second", emit: true))
            #expect(heardFirst == 0 && heardSecond == 0, "their events reached no stream")
            // The cut's length is the thing under test here, not a wait for something: nothing to poll.
            let left = Self.cutSeconds - Date().timeIntervalSince(cutAt)
            if left > 0 { try await Task.sleep(nanoseconds: UInt64(left * 1e9)) }
            let linesBefore = tunnel.stderr.count
            try await offPool { try fixture.sshd.start() }
            let cutFor = Date().timeIntervalSince(cutAt)
            // The tunnel comes back by itself; measured from its "connected to" line.
            let back = try await offPool {
                tunnel.waitForLine(containing: "connected to ", after: linesBefore, timeout: 90).map { _ in Date() }
            }
            let backAt = try #require(back, "\(tunnel.stderrText)")
            let told = try await offPool {
                waitUntil(timeout: 30) { NotifyCatchUpTests.records(record).count >= 4 } ? Date() : nil
            }
            let toldAt = try #require(told, "\(NotifyCatchUpTests.records(record)) \(tunnel.stderrText)")
            print(
                "NotifyCutTests \(flavor): VPS down \(String(format: "%.1f", cutFor)) s, tunnel back \(String(format: "%.1f", backAt.timeIntervalSince(cutAt))) s after the cut; the three told \(String(format: "%.2f", toldAt.timeIntervalSince(backAt))) s after the tunnel was back"
            )

            var peers = Set(NotifyCatchUpTests.peers(backend))
            for round in 0..<10 {
                let seen = peers
                peers = try #require(
                    try await offPool { try Self.reconnect(fixture, backend, after: seen) },
                    "round \(round): the stream did not come back \(tunnel.stderrText)")
            }
            // One more cut with a last request: each catch-up runs in turn on the follower's thread,
            // so a doubled one would have come before it.
            let last = try #require(NotifyCatchUpTests.askUnheard(backend, "make last"))
            let before = peers
            _ = try #require(
                try await offPool { try Self.reconnect(fixture, backend, after: before) }, "\(tunnel.stderrText)")
            try #require(
                try await offPool { waitUntil(timeout: 30) { NotifyCatchUpTests.records(record).count >= 5 } },
                "\(NotifyCatchUpTests.records(record)) \(tunnel.stderrText)")

            let records = NotifyCatchUpTests.records(record)
            #expect(records.count == 5, "a moment told twice across 11 cuts: \(records)")
            #expect(records.first == "permission|\(live)|bash: make live", "\(records)")
            #expect(
                records.last?.hasPrefix("permission|\(last)|bash: make last (asked while you were away") == true,
                "\(records)")
            let afterCut = Array(records.dropFirst().prefix(3))
            #expect(
                afterCut.filter { $0.hasPrefix("permission|\(first)|bash: make first (asked while you were away") }
                    .count == 1, "\(records)")
            #expect(
                afterCut.filter { $0.hasPrefix("permission|\(second)|bash: make second (asked while you were away") }
                    .count == 1, "\(records)")
            #expect(
                afterCut.filter {
                    $0.hasPrefix("finished||the agent is done and waits for you (finished while you were away")
                }.count == 1, "\(records)")
            let lines = tunnel.stderr.filter { $0.contains("notify: ") }
            #expect(lines.count == 5 && lines.filter { $0.contains("OpenCode finished: ses_b") }.count == 1, "\(lines)")
            #expect(!(tunnel.stderrText + records.joined()).contains(password))
            #expect(tunnel.isRunning)
        }
    }

    @Test(
        "a permission and a question already pending when tunnel up starts are told once, with the permission's id; a reconnect tells them not again",
        arguments: ["opencode1", "opencode2"])
    func pendingAtStart(flavor: String) async throws {
        let (backend, password) = try OpenCodeStandIn.withFreshPassword(flavor: flavor)
        defer { backend.stop() }
        let waiting = try #require(backend.askPermission(session: "ses_a", patterns: ["git push"]))
        let question = backend.post(
            "/standin/question",
            ["sessionID": "ses_a", "questions": [["question": "Which database?", "header": "DB", "options": []]]])
        #expect(question.status == 200 && question.body.contains(#""streams":0"#), "\(question)")
        let scratch = try TempDirectory()
        let (fixture, tunnel, record) = try NotifyCatchUpTests.recordingTunnel(
            to: backend, password: password, in: scratch)
        defer { tunnel.stopGracefullyOrKill() }
        try #require(try await offPool { NotifyTests.followerListens(backend, tunnel) }, "\(tunnel.stderrText)")
        try #require(
            try await offPool { waitUntil(timeout: 20) { NotifyCatchUpTests.records(record).count >= 2 } },
            "\(NotifyCatchUpTests.records(record)) \(tunnel.stderrText)")
        let peers = Set(NotifyCatchUpTests.peers(backend))
        let seen = try #require(
            try await offPool { try Self.reconnect(fixture, backend, after: peers) }, "\(tunnel.stderrText)")
        let last = try #require(NotifyCatchUpTests.askUnheard(backend, "make last"))
        _ = try #require(
            try await offPool { try Self.reconnect(fixture, backend, after: seen) }, "\(tunnel.stderrText)")
        try #require(
            try await offPool { waitUntil(timeout: 30) { NotifyCatchUpTests.records(record).count >= 3 } },
            "\(NotifyCatchUpTests.records(record)) \(tunnel.stderrText)")
        let records = NotifyCatchUpTests.records(record)
        #expect(records.count == 3, "\(records)")
        #expect(
            records.contains { $0.hasPrefix("permission|\(waiting)|bash: git push (asked while you were away") },
            "\(records)")
        #expect(
            records.contains { $0.hasPrefix("permission||DB: Which database? (asked while you were away") },
            "\(records)")
        #expect(records.last?.hasPrefix("permission|\(last)|") == true, "\(records)")
        #expect(!(tunnel.stderrText + records.joined()).contains(password))
    }
}
