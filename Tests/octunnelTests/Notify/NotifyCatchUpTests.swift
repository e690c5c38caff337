import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48, "nothing missed across a cut", through a real sshd: permissions and a question
/// asked while nobody listened on OpenCode's event stream (their events gone, as OpenCode's
/// streams keep nothing) are told once when `tunnel up`'s stream is back after the VPS was down
/// (sshd and its sessions killed, then started again) or the tunnel's session was cut
/// (`tunnel reconnect`), from OpenCode's pending lists (1.x: and a session seen
/// busy that went idle meanwhile, from `GET /session/status`); one told before the cut is not
/// told again, after this cut or any of ten more.
@Suite(
    "notifications: what was asked during a cut is told once when the stream is back", .ownThreads,
    .timeLimit(.minutes(4)))
struct NotifyCatchUpTests {
    /// A program that appends "event|permission id|message", one a line, to `file`.
    static func recorder(in directory: TempDirectory, file: String) throws -> String {
        try directory.write(
            "record.sh",
            """
            #!/bin/sh
            printf '%s|%s|%s\\n' "$OCTUNNEL_EVENT" "$OCTUNNEL_PERMISSION_ID" "$OCTUNNEL_MESSAGE" >> '\(file)'
            """, mode: 0o755)
        return directory.file("record.sh")
    }

    /// `tunnel up` through a real sshd to `backend` (its password in the environment), every
    /// notification recorded by `recorder` in a file of `scratch`.
    static func recordingTunnel(
        to backend: OpenCodeStandIn, password: String, in scratch: TempDirectory
    ) throws
        -> (fixture: TunnelFixture, tunnel: RunningProcess, record: String)
    {
        let fixture = try TunnelFixture()
        let record = scratch.file("record")
        let tunnel = try fixture.up(
            remotePort: backend.port,
            extra: ["--no-pair-port", "--notify-command", try recorder(in: scratch, file: record)],
            environment: inheritedEnvironment.merging(["OPENCODE_PASSWORD": password]) { $1 })
        return (fixture, tunnel, record)
    }

    /// A `flavor` stand-in behind a fresh password and a `recordingTunnel` to it; `body` runs once
    /// the tunnel follows the stand-in's events, then all is stopped.
    static func withRecordingTunnel(
        flavor: String,
        _ body: (
            _ backend: OpenCodeStandIn, _ password: String, _ fixture: TunnelFixture,
            _ tunnel: RunningProcess, _ record: String
        ) async throws -> Void
    ) async throws {
        let (backend, password) = try OpenCodeStandIn.withFreshPassword(flavor: flavor)
        defer { backend.stop() }
        let scratch = try TempDirectory()
        let (fixture, tunnel, record) = try recordingTunnel(to: backend, password: password, in: scratch)
        defer { tunnel.stopGracefullyOrKill() }
        try #require(try await offPool { NotifyTests.followerListens(backend, tunnel) }, "\(tunnel.stderrText)")
        try await body(backend, password, fixture, tunnel, record)
    }

    static func records(_ file: String) -> [String] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The peers of the event streams open at the stand-in (a new stream shows as a new peer).
    static func peers(_ backend: OpenCodeStandIn) -> [String] {
        let answer = backend.post("/standin/emit", ["type": "server.ping", "fields": [String: Any]()])
        return
            ((try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["peers"] as? [String])
            ?? []
    }

    /// Adds a pending permission, its event sent to the streams open (`emit`) or to none; its id
    /// and how many streams got the event.
    static func ask(_ backend: OpenCodeStandIn, _ pattern: String, emit: Bool) -> (id: String, streams: Int)? {
        let answer = backend.post(
            "/standin/permission", ["sessionID": "ses_a", "permission": "bash", "patterns": [pattern], "emit": emit])
        guard let object = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
            let id = object["id"] as? String
        else { return nil }
        return (id, object["streams"] as? Int ?? -1)
    }

    /// Adds a pending permission without its event (asked between two moments of a cut no test
    /// can stand in: `tunnel reconnect` is over at once); its id.
    static func askUnheard(_ backend: OpenCodeStandIn, _ pattern: String) -> String? {
        ask(backend, pattern, emit: false)?.id
    }

    @Test(
        "1.x and 2.x: one permission told live; two permissions and a question asked unheard (1.x: and a session that went idle unheard) while the VPS is down are told once when it is back, with their ids; nine reconnects more tell only the one asked before the last",
        arguments: ["opencode1", "opencode2"])
    func toldOnceAcrossCuts(flavor: String) async throws {
        try await NotifyCatchUpTests.withRecordingTunnel(flavor: flavor) { backend, password, fixture, tunnel, record in
            let finishes = flavor == "opencode1"
            if finishes {
                // 1.x: two sessions seen busy on the stream before the cut (seen once the live request after them is told: one stream, in order).
                #expect(
                    NotifyTests.emit(
                        backend, NotifyTests.session("ses_b", "session.status", ["status": ["type": "busy"]])) == 1)
                #expect(
                    NotifyTests.emit(
                        backend, NotifyTests.session("ses_c", "session.status", ["status": ["type": "busy"]])) == 1)
            }
            let live = try #require(
                backend.askPermission(session: "ses_a", patterns: ["make live"], title: "Fix the login bug"))
            try #require(
                try await offPool { waitUntil(timeout: 20) { Self.records(record).count == 1 } }, "\(tunnel.stderrText)"
            )
            // The first cut: the VPS goes down (sshd and its sessions killed). Meanwhile the agent asks
            // twice and a question, and (1.x) ses_b goes idle: their events reach no stream.
            try await offPool { fixture.sshd.stop(hard: true) }
            try #require(
                try await offPool {
                    waitUntil(timeout: 20) {
                        NotifyTests.emit(backend, ["type": "server.ping", "fields": [String: Any]()]) == 0
                    }
                },
                "the follower's stream outlived the VPS")
            if finishes {
                #expect(
                    NotifyTests.emit(
                        backend, NotifyTests.session("ses_b", "session.status", ["status": ["type": "idle"]])) == 0)
            }
            let (first, heardFirst) = try #require(Self.ask(backend, "make first", emit: true))
            let (second, heardSecond) = try #require(Self.ask(backend, "make second", emit: true))
            #expect(heardFirst == 0 && heardSecond == 0)
            let question = backend.post(
                "/standin/question",
                ["sessionID": "ses_a", "questions": [["question": "Which database?", "header": "DB", "options": []]]])
            #expect(question.status == 200 && question.body.contains(#""streams":0"#), "\(question)")
            try await offPool { try fixture.sshd.start() }
            // The tunnel comes back by itself.
            let afterCut = finishes ? 5 : 4
            try #require(
                try await offPool { waitUntil(timeout: 60) { Self.records(record).count >= afterCut } },
                "\(Self.records(record)) \(tunnel.stderrText)")

            let third = try #require(Self.askUnheard(backend, "make third"))
            let again = try await offPool { try fixture.run(["tunnel", "reconnect", "--wait", "30"]) }
            #expect(again.status == 0, "\(again)")
            try #require(
                try await offPool { waitUntil(timeout: 30) { Self.records(record).count >= afterCut + 1 } },
                "\(Self.records(record)) \(tunnel.stderrText)")
            // Eight more cuts with nothing new, each until the follower's stream is back (a peer the
            // stand-in has not seen), then one more with a last request: each catch-up runs in turn
            // on the follower's thread, so a doubled one would have come before `last`.
            var peers = Set(Self.peers(backend))
            for round in 0..<8 {
                let cut = try await offPool { try fixture.run(["tunnel", "reconnect", "--wait", "30"]) }
                #expect(cut.status == 0, "round \(round): \(cut)")
                let before = peers
                let back = try await offPool {
                    waitUntil(timeout: 30) { !Set(Self.peers(backend)).subtracting(before).isEmpty }
                }
                try #require(back, "round \(round): the stream did not come back \(tunnel.stderrText)")
                peers.formUnion(Self.peers(backend))
            }
            let last = try #require(Self.askUnheard(backend, "make last"))
            let final = try await offPool { try fixture.run(["tunnel", "reconnect", "--wait", "30"]) }
            #expect(final.status == 0, "\(final)")
            try #require(
                try await offPool { waitUntil(timeout: 30) { Self.records(record).count >= afterCut + 2 } },
                "\(Self.records(record)) \(tunnel.stderrText)")
            let records = Self.records(record)
            #expect(records.count == afterCut + 2, "a moment told twice across 11 cuts: \(records)")
            #expect(
                records.last?.hasPrefix("permission|\(last)|bash: make last (asked while you were away") == true,
                "\(records)")
            if finishes {
                #expect(
                    records.filter { $0.hasPrefix("finished|") } == [
                        "finished||the agent is done and waits for you (finished while you were away)"
                    ], "ses_b only: ses_c still works \(records)")
            }
            #expect(records.first == "permission|\(live)|bash: make live", "\(records)")
            #expect(
                records.contains { $0.hasPrefix("permission|\(first)|bash: make first (asked while you were away") },
                "\(records)")
            #expect(
                records.contains { $0.hasPrefix("permission|\(second)|bash: make second (asked while you were away") },
                "\(records)")
            #expect(
                records.contains { $0.hasPrefix("permission||DB: Which database? (asked while you were away") },
                "\(records)")
            #expect(
                records.contains { $0.hasPrefix("permission|\(third)|bash: make third (asked while you were away") },
                "\(records)")
            let lines = tunnel.stderr.filter { $0.contains("notify: ") }
            #expect(
                lines.count == afterCut + 2 && lines.filter { $0.contains("asked while you were away") }.count == 5,
                "\(lines)")
            #expect(
                lines.filter {
                    $0.contains("OpenCode finished: ses_b")
                        && $0.hasSuffix("the agent is done and waits for you (finished while you were away)")
                }.count == (finishes ? 1 : 0), "\(lines)")
            #expect(!(tunnel.stderrText + records.joined()).contains(password))
            #expect(tunnel.isRunning)
        }
    }
}
