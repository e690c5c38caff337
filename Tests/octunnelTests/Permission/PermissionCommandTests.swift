import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48, "answer from a terminal": `octunnel permission list`, `permission allow|always|
/// reject ID` and a question's `permission answer ID LABEL|dismiss ID` through a running `tunnel up` and a real sshd, the stand-in playing OpenCode 1.x
/// and 2.x's pending lists and reply routes and recording every reply it gets.
@Suite("permission list and answer through the running tunnel", .ownThreads, .timeLimit(.minutes(3)))
struct PermissionCommandTests {
    /// A tunnel up to `backend` with its password in the environment, healthy.
    static func tunnel(
        _ fixture: TunnelFixture, _ backend: OpenCodeStandIn, environment: [String: String]
    ) async throws -> RunningProcess {
        let tunnel = try fixture.up(
            remotePort: backend.port, extra: ["--no-pair-port", "--no-notify"], environment: environment)
        try #require(try await offPool { tunnel.waitForLine(containing: "health ✓") } != nil, "\(tunnel.stderrText)")
        return tunnel
    }

    /// A `flavor` stand-in behind a fresh password and a healthy tunnel up to it, the password in
    /// `environment`; `body` runs with them, then all is stopped.
    static func withTunnel(
        flavor: String,
        _ body: (
            _ backend: OpenCodeStandIn, _ fixture: TunnelFixture, _ tunnel: RunningProcess,
            _ environment: [String: String], _ password: String
        ) async throws -> Void
    ) async throws {
        let (backend, password) = try OpenCodeStandIn.withFreshPassword(flavor: flavor)
        defer { backend.stop() }
        let fixture = try TunnelFixture()
        let environment = inheritedEnvironment.merging(["OPENCODE_PASSWORD": password]) { $1 }
        let tunnel = try await Self.tunnel(fixture, backend, environment: environment)
        defer { tunnel.stopGracefullyOrKill() }
        try await body(backend, fixture, tunnel, environment, password)
    }

    static func run(
        _ fixture: TunnelFixture, _ arguments: [String], _ environment: [String: String]
    ) async throws -> ProcessResult {
        try await offPool {
            try OCTunnelTestSupport.run(
                octunnelBinary, ["permission"] + arguments + ["--home", fixture.home.path], environment: environment)
        }
    }

    @Test(
        "1.x and 2.x: list shows a pending permission; allow sends the version's route and body once; one answered elsewhere first is said plainly, exit 4, nothing sent",
        arguments: ["opencode1", "opencode2"])
    func listAllowAndGone(flavor: String) async throws {
        let route = { (id: String) in
            flavor == "opencode1" ? "/permission/\(id)/reply" : "/api/session/ses_a/permission/\(id)/reply"
        }
        try await Self.withTunnel(flavor: flavor) { backend, fixture, tunnel, environment, password in

            let id = try #require(
                backend.askPermission(
                    session: "ses_a", patterns: ["git push"], title: "Fix \u{1b}[31mlogin \(password)"))
            let question = backend.post(
                "/standin/question",
                [
                    "sessionID": "ses_a",
                    "questions": [
                        [
                            "question": "Which database?", "header": "DB",
                            "options": [["label": "Postgres", "description": ""]],
                        ]
                    ],
                ])
            #expect(question.status == 200, "\(question)")
            let listed = try await Self.run(fixture, ["list", "--json"], environment)
            #expect(listed.status == 0, "\(listed)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any], "\(listed)")
            let permissions = try #require(object["permissions"] as? [[String: Any]])
            #expect(permissions.compactMap { $0["id"] as? String } == [id], "\(listed.stdout)")
            #expect(
                permissions.first?["permission"] as? String == "bash"
                    && permissions.first?["patterns"] as? [String] == ["git push"], "\(listed.stdout)")
            #expect((permissions.first?["secondsAgo"] as? Int).map { $0 >= 0 && $0 < 600 } == true, "\(listed.stdout)")
            let human = try await Self.run(fixture, ["list"], environment)
            #expect(
                human.stdout.contains(id)
                    && human.stdout.contains("bash: git push  (Fix \\x1b[31mlogin ***, session ses_a)"), "\(human)")
            #expect(permissions.first?["sessionTitle"] as? String == "Fix \\x1b[31mlogin ***", "\(listed.stdout)")
            let questions = try #require(object["questions"] as? [[String: Any]], "\(listed.stdout)")
            #expect(
                questions.first?["question"] as? String == "DB: Which database?"
                    && questions.first?["options"] as? [String] == ["Postgres"], "\(listed.stdout)")
            #expect(human.stdout.contains("question: DB: Which database? [Postgres]  (Fix "), "\(human)")
            #expect(!(human.stdout + human.stderr + listed.stdout).contains(password))
            let wrong = try await Self.run(
                fixture, ["list"], environment.merging(["OPENCODE_PASSWORD": "wrong-\(password)"]) { $1 })
            #expect(wrong.status == 79, "\(wrong)")
            #expect(
                wrong.stderr.contains("OpenCode refused the password (from OPENCODE_PASSWORD)")
                    && !wrong.stderr.contains(password), "\(wrong)")

            let allowed = try await Self.run(fixture, ["allow", id], environment)
            #expect(allowed.status == 0, "\(allowed)")
            #expect(allowed.stderr.contains("allowed once: bash: git push (\(id))"), "\(allowed)")
            let replies = backend.replies
            #expect(replies.count == 1, "\(replies)")
            #expect(replies.first?["path"] as? String == route(id), "\(replies)")
            #expect(replies.first?["body"] as? String == #"{"reply":"once"}"#, "\(replies)")

            // Answered in OpenCode's own UI first: octunnel says so, and sends nothing.
            let second = try #require(backend.askPermission(session: "ses_a", patterns: ["rm -rf build"]))
            let elsewhere = route(second)
            #expect(
                backend.post(elsewhere, ["reply": "reject"], authorization: backend.basicAuthorization).status < 300)
            let gone = try await Self.run(fixture, ["reject", second], environment)
            #expect(gone.status == 4, "\(gone)")
            #expect(
                gone.stderr.contains(
                    "permission \(second) is no longer pending: it was already answered elsewhere, or OpenCode restarted"
                ), "\(gone)")
            #expect(backend.replies.count == 2, "\(backend.replies)")

            // Another project's requests are listed and answered with --project (OpenCode keeps them per directory).
            let project = "/srv/other project/ü"
            let other = try #require(backend.askPermission(session: "ses_b", patterns: ["ls"], directory: project))
            let unscoped = try await Self.run(fixture, ["list"], environment)
            #expect(unscoped.status == 0 && !unscoped.stdout.contains(other), "\(unscoped)")
            let scoped = try await Self.run(fixture, ["list", "--json", "--project", project], environment)
            let scopedObject = try #require(
                try JSONSerialization.jsonObject(with: Data(scoped.stdout.utf8)) as? [String: Any], "\(scoped)")
            let scopedIDs = ((scopedObject["permissions"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
            #expect(scopedIDs == [other], "\(scoped)")
            let answered = try await Self.run(fixture, ["always", other, "--project", project], environment)
            #expect(answered.status == 0, "\(answered)")
            #expect(
                backend.replies.count == 3 && backend.replies.last?["body"] as? String == #"{"reply":"always"}"#,
                "\(backend.replies)")
            #expect(tunnel.isRunning)
        }
    }

    @Test(
        "1.x and 2.x: answer sends the option's label once to the version's route; a label OpenCode does not list sends nothing (exit 69); dismiss rejects; a question answered elsewhere first is said plainly, exit 4, nothing sent",
        arguments: ["opencode1", "opencode2"])
    func answerQuestion(flavor: String) async throws {
        let route = { (id: String, verb: String) in
            flavor == "opencode1" ? "/question/\(id)/\(verb)" : "/api/session/ses_a/question/\(id)/\(verb)"
        }
        try await Self.withTunnel(flavor: flavor) { backend, fixture, tunnel, environment, password in
            func ask(_ labels: [String]) throws -> String {
                let options = labels.map { ["label": $0, "description": ""] }
                let answer = backend.post(
                    "/standin/question",
                    [
                        "sessionID": "ses_a",
                        "questions": [["question": "Which database?", "header": "DB", "options": options]],
                    ])
                return try #require(
                    (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["id"]
                        as? String, "\(answer)")
            }

            let id = try ask(["Postgres", "SQLite"])
            // Only a question waits: listed, and not called nothing.
            let listed = try await Self.run(fixture, ["list"], environment)
            #expect(
                listed.status == 0 && listed.stdout.contains("\(id)") && listed.stdout.contains("[Postgres, SQLite]"),
                "\(listed)")
            #expect(!listed.stderr.contains("nothing waits"), "\(listed)")
            let unlisted = try await Self.run(fixture, ["answer", id, "MySQL"], environment)
            #expect(unlisted.status == 69, "\(unlisted)")
            #expect(
                unlisted.stderr.contains(
                    "\"MySQL\" is not an option OpenCode lists for question \(id) (\"Postgres\", \"SQLite\"); nothing was sent"
                ), "\(unlisted)")
            #expect(backend.replies.isEmpty, "\(backend.replies)")
            let answered = try await Self.run(fixture, ["answer", id, "SQLite"], environment)
            #expect(answered.status == 0, "\(answered)")
            #expect(answered.stderr.contains("answered \"SQLite\": question \(id)"), "\(answered)")
            #expect(backend.replies.count == 1, "\(backend.replies)")
            #expect(backend.replies.first?["path"] as? String == route(id, "reply"), "\(backend.replies)")
            #expect(backend.replies.first?["body"] as? String == #"{"answers":[["SQLite"]]}"#, "\(backend.replies)")

            // Answered already (above): gone, said plainly, nothing sent again.
            let again = try await Self.run(fixture, ["answer", id, "SQLite"], environment)
            #expect(again.status == 4, "\(again)")
            #expect(again.stderr.contains("question \(id) is no longer pending"), "\(again)")
            #expect(backend.replies.count == 1, "\(backend.replies)")

            let other = try ask(["Yes", "No"])
            let dismissed = try await Self.run(fixture, ["dismiss", other], environment)
            #expect(dismissed.status == 0, "\(dismissed)")
            #expect(
                backend.replies.count == 2 && backend.replies.last?["path"] as? String == route(other, "reject"),
                "\(backend.replies)")
            #expect(!(answered.stderr + again.stderr + dismissed.stderr).contains(password))
            #expect(tunnel.isRunning)
        }
    }

    @Test(
        "an older 1.x without POST /permission/:id/reply: the reply goes to /session/:id/permissions/:id with {\"response\"}; a request waits across the tunnel's cut; after OpenCode restarted one is gone, exit 4"
    )
    func olderOneFallsBack() async throws {
        let backend = try OpenCodeStandIn(flavor: "opencode1", extraArguments: ["--old-permission-reply"])
        defer { backend.stop() }
        let fixture = try TunnelFixture()
        let environment = inheritedEnvironment.filter { !$0.key.hasPrefix("OPENCODE_") }
        let tunnel = try await Self.tunnel(fixture, backend, environment: environment)
        defer { tunnel.stopGracefullyOrKill() }
        let id = try #require(backend.askPermission(session: "ses_old", permission: "edit", patterns: ["a.swift"]))
        // The request lives in OpenCode, not in a connection: a new session of the tunnel still lists it.
        let reconnect = try await offPool { try fixture.run(["tunnel", "reconnect", "--wait", "30"]) }
        #expect(reconnect.status == 0, "\(reconnect)")
        let listed = try await Self.run(fixture, ["list"], environment)
        #expect(listed.status == 0 && listed.stdout.contains(id), "\(listed)")
        let always = try await Self.run(fixture, ["always", id], environment)
        #expect(always.status == 0, "\(always)")
        let replies = backend.replies
        #expect(replies.compactMap { $0["path"] as? String } == ["/session/ses_old/permissions/\(id)"], "\(replies)")
        #expect(replies.first?["body"] as? String == #"{"response":"always"}"#, "\(replies)")

        let lost = try #require(backend.askPermission(session: "ses_old", patterns: ["make"]))
        #expect(backend.post("/standin/forget", [:]).status == 200) // OpenCode restarted: it keeps none
        let gone = try await Self.run(fixture, ["allow", lost], environment)
        #expect(gone.status == 4 && gone.stderr.contains("no longer pending"), "\(gone)")
        #expect(backend.replies.count == 1, "\(backend.replies)")
    }

    @Test("no tunnel running: exit 3 and one line, as `tunnel status`")
    func noTunnel() async throws {
        let home = try TempDirectory("octunnel-home")
        let result = try await offPool {
            try OCTunnelTestSupport.run(octunnelBinary, ["permission", "list", "--home", home.path])
        }
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("no tunnel running"), "\(result)")
        let answer = try await offPool {
            try OCTunnelTestSupport.run(octunnelBinary, ["permission", "allow", "per_x", "--home", home.path])
        }
        #expect(answer.status == 3, "\(answer)")
    }
}
