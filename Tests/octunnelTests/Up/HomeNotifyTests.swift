import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `home up` follows OpenCode itself (issue 54), with no laptop at all: through a real sshd as
/// the VPS, the stand-in as OpenCode at home, its `--notify-command` and its stderr tell the
/// finish, the permission and the failure once each; the permission's line says how to answer
/// it, and `octunnel permission list` / `allow` on the home machine do (beside the running
/// `home up`, with the password file it saved); `--save` keeps the notify choice for the home.
@Suite("home up: notifications with no laptop", .ownThreads, .timeLimit(.minutes(3)))
struct HomeNotifyTests {
    @Test(
        "1.x and 2.x: finish, permission, failure told once each by home up alone; the permission answered at home with the command its line gives; the notify choice saved in the home section",
        arguments: ["opencode1", "opencode2"])
    func homeAlone(flavor: String) async throws {
        try await NotifyTests.withStandIn(flavor: flavor) { backend, password, fixture, scratch in
            try scratch.write("pw", password + "\n", mode: 0o600)
            let record = scratch.file("record")
            let recorder = try NotifyTests.recorder(in: scratch, file: record)
            let (home, _) = try await fixture.homeUpListening(
                homePort: backend.port,
                extra: ["--password-file", scratch.file("pw"), "--notify-command", recorder, "--save"])
            defer { home.stopGracefullyOrKill() }
            try #require(try await offPool { NotifyTests.followerListens(backend, home) }, "\(home.stderrText)")

            for event in StandInEvent.finish("s1", title: "Fix the login bug", directory: "/home/me/shop") + [
                StandInEvent.failure("s2", "rate limited")
            ] {
                #expect(NotifyTests.emit(backend, event) == 1)
            }
            let id = try #require(backend.askPermission(session: "s3", patterns: ["git push"]))
            let records = try await offPool { () -> [String] in
                _ = waitUntil(timeout: 20) { NotifierLines.read(record).count >= 3 }
                return NotifierLines.read(record)
            }
            #expect(
                records.map { $0.split(separator: "|").first.map(String.init) ?? "" }.sorted() == [
                    "failed", "finished", "permission",
                ],
                "\(records) \(home.stderrText)")
            let hint = "answer: octunnel permission allow|always|reject \(id)"
            #expect(try await offPool { home.waitForLine(containing: hint) } != nil, "\(home.stderrText)")

            // `home status` keeps them as `tunnel status` does.
            let status = try await NotifyTests.statusKinds(fixture, ["home", "status", "--json"])
            #expect(status.kinds == ["failed", "finished", "permission"], "\(status.object)")
            #expect(status.object["permissionsWaiting"] as? Int == 1, "\(status.object)")

            let list = try await offPool { try fixture.run(["permission", "list"]) }
            #expect(list.status == 0 && list.stdout.contains(id), "\(list)")
            let allow = try await offPool { try fixture.run(["permission", "allow", id]) }
            #expect(allow.status == 0, "\(allow)")
            let replies = backend.replies
            #expect(replies.count == 1 && replies.first?["body"] as? String == #"{"reply":"once"}"#, "\(replies)")
            #expect(!(home.stderrText + list.stdout + list.stderr + records.joined()).contains(password))

            let config = try #require(
                try JSONSerialization.jsonObject(with: Data(readText(fixture.home.file("config.json")).utf8))
                    as? [String: Any])
            let section = try #require(
                ((config["profiles"] as? [String: Any])?["default"] as? [String: Any])?["home"] as? [String: Any]
                    ?? config[
                        "home"] as? [String: Any],
                "\(config)")
            #expect(section["notifyCommand"] as? String == recorder, "\(section)")
        }
    }
}

/// A file's lines (none when it is not there yet).
enum NotifierLines {
    static func read(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
