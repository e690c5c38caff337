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

    /// How a request asked while nobody listened starts in the record: "permission|ID|MESSAGE (asked while you were
    /// away"; a question has no id.
    static func askedAway(_ id: String, _ message: String) -> String {
        "permission|\(id)|\(message) (asked while you were away"
    }

    /// Whether `records` hold exactly one record starting with each of `prefixes`.
    static func toldOnce(_ records: [String], _ prefixes: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for prefix in prefixes {
            #expect(
                records.filter { $0.hasPrefix(prefix) }.count == 1, "\(prefix) in \(records)",
                sourceLocation: sourceLocation)
        }
    }

    static func records(_ file: String) -> [String] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
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
                #expect(NotifyTests.emit(backend, StandInEvent.status("ses_b", "busy")) == 1)
                #expect(NotifyTests.emit(backend, StandInEvent.status("ses_c", "busy")) == 1)
            }
            let live = try #require(
                backend.askPermission(session: "ses_a", patterns: ["make live"], title: "Fix the login bug"))
            try await CutSteps.requireRecords(record, atLeast: 1, timeout: 20, tunnel)
            // The first cut: the VPS goes down (sshd and its sessions killed). Meanwhile the agent asks
            // twice and a question, and (1.x) ses_b goes idle: their events reach no stream.
            try await CutSteps.stopVPS(fixture, backend)
            if finishes { #expect(NotifyTests.emit(backend, StandInEvent.status("ses_b", "idle")) == 0) }
            let (first, heardFirst) = try #require(Self.ask(backend, "make first", emit: true))
            let (second, heardSecond) = try #require(Self.ask(backend, "make second", emit: true))
            #expect(heardFirst == 0 && heardSecond == 0)
            #expect(backend.askQuestion(session: "ses_a", "Which database?")?.streams == 0)
            try await offPool { try fixture.sshd.start() }
            // The tunnel comes back by itself.
            let afterCut = finishes ? 5 : 4
            try await CutSteps.requireRecords(record, atLeast: afterCut, timeout: 60, tunnel)

            let third = try #require(Self.askUnheard(backend, "make third"))
            _ = try await CutSteps.reconnects(1, fixture, backend, tunnel)
            try await CutSteps.requireRecords(record, atLeast: afterCut + 1, tunnel)
            // Eight more cuts with nothing new, each until the follower's stream is back (a peer the
            // stand-in has not seen), then one more with a last request: each catch-up runs in turn
            // on the follower's thread, so a doubled one would have come before `last`.
            _ = try await CutSteps.reconnects(8, fixture, backend, tunnel)
            let last = try await CutSteps.lastRequest(fixture, backend, tunnel, record: record, after: afterCut + 1)
            let records = Self.records(record)
            #expect(records.count == afterCut + 2, "a moment told twice across 11 cuts: \(records)")
            #expect(records.last?.hasPrefix(Self.askedAway(last, "bash: make last")) == true, "\(records)")
            if finishes {
                #expect(
                    records.filter { $0.hasPrefix("finished|") } == [
                        "finished||the agent is done and waits for you (finished while you were away)"
                    ], "ses_b only: ses_c still works \(records)")
            }
            #expect(records.first == "permission|\(live)|bash: make live", "\(records)")
            Self.toldOnce(
                records,
                [
                    Self.askedAway(first, "bash: make first"), Self.askedAway(second, "bash: make second"),
                    Self.askedAway("", "DB: Which database?"), Self.askedAway(third, "bash: make third"),
                ])
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
