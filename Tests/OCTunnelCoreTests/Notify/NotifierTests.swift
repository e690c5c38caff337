import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The notifier against real programs (issue 48): at most four at once from one bounded queue,
/// the rest merged; each in its own process group, killed whole at its time limit and at stop;
/// no `OPENCODE_*` in their environment; the password on no surface.
@Suite("the notifier: bounded programs, process groups, redaction", .ownThreads, .timeLimit(.minutes(2)))
struct NotifierTests {
    /// Collects what the notifier says and records, from any thread.
    final class Said: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [EngineEvent] = []
        private var records: [AgentMoment] = []
        func emit(_ event: EngineEvent) { lock.lock(); events.append(event); lock.unlock() }
        func record(_ moment: AgentMoment) { lock.lock(); records.append(moment); lock.unlock() }
        var lines: [String] { lock.lock(); defer { lock.unlock() }; return events.map(\.text) }
        var json: [String] { lock.lock(); defer { lock.unlock() }; return events.map { jsonLine($0.jsonObject) } }
        /// What `status` keeps of each moment (`Engine.recordNotification`).
        var status: [String] {
            lock.lock(); defer { lock.unlock() }; return records.map { "\($0.headline): \($0.message)" }
        }
    }

    static let environment = [
        "PATH": "/usr/bin:/bin", "OPENCODE_PASSWORD": "pw-in-env", "OPENCODE_SERVER_USERNAME": "me",
    ]

    static func notifier(_ command: String, timeout: Double = 10, secrets: [String] = [], said: Said) -> Notifier {
        var options = NotifyOptions(command: command)
        options.desktop = false
        options.commandTimeout = timeout
        return Notifier(
            options: options, environment: environment, secrets: secrets, record: { said.record($0) },
            emit: { said.emit($0) })
    }

    static func asked(_ request: Int) -> AgentMoment {
        var moment = AgentMoment(
            kind: .permission, sessionID: "ses_1", title: "Fix the login bug", directory: "/home/me/shop",
            detail: "bash: make \(request)")
        moment.permissionID = "per_\(request)"
        return moment
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Whether `pid` is gone (or a zombie nobody reaped yet: dead all the same).
    static func isGone(_ pid: Int) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }

    @Test(
        "40 requests at once and a program that takes a second: never more than 4 run, the burst told one by one, the rest as one \"+N more permissions asked in Fix the login bug\" notice that runs the program too"
    )
    func flood() async throws {
        let scratch = try TempDirectory()
        let log = scratch.file("log")
        try scratch.write(
            "slow.sh",
            "#!/bin/sh\necho \"start ${OCTUNNEL_PERMISSION_ID:-merged $OCTUNNEL_MERGED}\" >> '\(log)'\nsleep 1\necho end >> '\(log)'\n",
            mode: 0o755)
        let said = Said()
        let notifier = Self.notifier(scratch.file("slow.sh"), said: said)
        defer { notifier.stop() }
        for request in 0..<40 { notifier.notify(Self.asked(request)) }
        let most = try await offPool { () -> Int in
            var most = 0
            _ = waitUntil(timeout: 30) {
                most = max(most, notifier.running)
                return Self.lines(log).filter { $0 == "end" }.count == Notifier.Limits.burst + 1
            }
            return most
        }
        #expect(most <= Notifier.Limits.lanes && most > 1, "\(most)")
        let log0 = Self.lines(log)
        var running = 0, highest = 0
        for line in log0 {
            running += line.hasPrefix("start") ? 1 : -1
            highest = max(highest, running)
        }
        #expect(highest <= Notifier.Limits.lanes, "\(log0)")
        #expect(log0.filter { $0.hasPrefix("start per_") }.count == Notifier.Limits.burst, "\(log0)")
        #expect(log0.contains("start merged 32"), "\(log0)")
        #expect(said.lines.filter { $0.hasPrefix("notify: ") }.count == Notifier.Limits.burst + 1, "\(said.lines)")
        #expect(
            said.lines.contains(
                "notify: OpenCode asks for permission: Fix the login bug (shop): +32 more permissions asked in Fix the login bug (shop)"
            ),
            "\(said.lines)")
    }

    @Test(
        "at its time limit the program's whole group is killed (a `sleep 40` it started too); its environment has the moment and no OPENCODE_* variable"
    )
    func groupKilledAtTheLimit() async throws {
        let scratch = try TempDirectory()
        try scratch.write(
            "hang.sh",
            "#!/bin/sh\nenv > '\(scratch.file("env"))'\nsleep 40 &\necho $! > '\(scratch.file("pid"))'\nwait\n",
            mode: 0o755)
        let said = Said()
        let notifier = Self.notifier(scratch.file("hang.sh"), timeout: 1, said: said)
        defer { notifier.stop() }
        notifier.notify(Self.asked(7))
        #expect(
            try await offPool {
                waitUntil(timeout: 20) { said.lines.contains { $0.contains("ran longer than 1 s and was stopped") } }
            }, "\(said.lines)")
        let pid = try #require(Int(Self.lines(scratch.file("pid")).first ?? ""))
        #expect(try await offPool { waitUntil(timeout: 10) { Self.isGone(pid) } }, "the grandchild \(pid) lives on")
        let environment = Self.lines(scratch.file("env"))
        #expect(!environment.contains { $0.hasPrefix("OPENCODE_") }, "\(environment)")
        #expect(
            environment.contains("OCTUNNEL_PERMISSION_ID=per_7") && environment.contains("OCTUNNEL_EVENT=permission"),
            "\(environment)")
        #expect(notifier.running == 0)
    }

    @Test("stop ends the programs that run, whole groups, and reaps them before it returns; nothing is told after")
    func stopEndsWhatRuns() async throws {
        let scratch = try TempDirectory()
        try scratch.write("long.sh", "#!/bin/sh\nsleep 40 &\necho $! > '\(scratch.file("pid"))'\nwait\n", mode: 0o755)
        let said = Said()
        let notifier = Self.notifier(scratch.file("long.sh"), timeout: 60, said: said)
        notifier.notify(Self.asked(1))
        #expect(
            try await offPool {
                waitUntil(timeout: 20) { notifier.running == 1 && !Self.lines(scratch.file("pid")).isEmpty }
            })
        let pid = try #require(Int(Self.lines(scratch.file("pid")).first ?? ""))
        try await offPool { notifier.stop() }
        #expect(notifier.running == 0)
        #expect(
            try await offPool { waitUntil(timeout: 10) { Self.isGone(pid) } }, "the program's child \(pid) lives on")
        notifier.notify(Self.asked(2))
        #expect(said.lines.filter { $0.hasPrefix("notify: ") }.count == 1, "\(said.lines)")
    }

    @Test(
        "the password and its Basic token, planted in a title, an error's message, a permission's pattern and a question, appear on no surface: the line, the JSON event, status, the program's environment, the desktop notification"
    )
    func plantedPassword() async throws {
        let password = "pw-\(UUID().uuidString.prefix(12))"
        let credentials = OpenCodeCredentials(username: "opencode", password: password)
        let token = String(credentials.authorization!.dropFirst(6))
        let scratch = try TempDirectory()
        try scratch.write("env.sh", "#!/bin/sh\nenv > '\(scratch.file("env"))'-$$\n", mode: 0o755)
        var watch = AgentSessionWatch(secrets: credentials.secrets)
        func feed(_ type: String, _ fields: [String: Any]) -> [AgentMoment] {
            watch.feed(
                OpenCodeEvent(type: type, fields: fields.merging(["sessionID": "ses_\(password)"]) { $1 }), now: 0)
        }
        var moments: [AgentMoment] = []
        moments += feed(
            "session.updated",
            ["info": ["id": "ses_\(password)", "title": "Rotate \(password) now", "directory": "/home/\(token)/shop"]])
        moments += feed("session.status", ["status": ["type": "busy"]])
        moments += feed(
            "permission.asked",
            [
                "id": "per_\(password)", "permission": "bash",
                "patterns": ["curl -u opencode:\(password) http://x", "echo \(token)"],
            ])
        moments += feed(
            "question.asked", ["id": "que_1", "questions": [["question": "Use Basic \(token) or \(password)?"]]])
        moments += feed(
            "session.error", ["error": ["name": "APIError", "data": ["message": "401 for opencode:\(password)"]]])
        moments += feed("session.status", ["status": ["type": "busy"]])
        moments += feed("session.status", ["status": ["type": "idle"]])
        moments += watch.due(now: 5)
        // And one that reaches the notifier unredacted: it redacts on its own too.
        moments.append(
            AgentMoment(kind: .failed, sessionID: "x", title: password, directory: nil, detail: "Basic \(token)"))
        #expect(moments.map(\.kind.rawValue).sorted() == ["failed", "failed", "finished", "permission", "permission"])

        let said = Said()
        let notifier = Self.notifier(scratch.file("env.sh"), secrets: credentials.secrets, said: said)
        defer { notifier.stop() }
        for moment in moments { notifier.notify(moment) }
        let files = try await offPool { () -> [String] in
            _ = waitUntil(timeout: 20) {
                ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).filter {
                    $0.hasPrefix("env-")
                }.count == 5
            }
            return ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).filter {
                $0.hasPrefix("env-")
            }
        }
        #expect(files.count == 5, "\(said.lines)")
        let environments = files.map { (try? String(contentsOfFile: scratch.file($0), encoding: .utf8)) ?? "" }
        let desktop = moments.compactMap {
            DesktopChannel.command(
                $0.redacted(credentials.secrets), environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"])
        }
        .flatMap(\.arguments)
        let surfaces = said.lines + said.json + said.status + environments + desktop
        #expect(said.lines.filter { $0.hasPrefix("notify: ") }.count == 5, "\(said.lines)")
        #expect(said.lines.contains { $0.contains("curl -u opencode:*** http://x, echo ***") }, "\(said.lines)")
        for surface in surfaces {
            #expect(!surface.contains(password) && !surface.contains(token), "\(surface)")
        }
        #expect(environments.allSatisfy { !$0.contains("pw-in-env") && !$0.contains("OPENCODE_") })
    }
}
