import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `home up --push URL --save` as a user runs it (issue 54): a real sshd as the VPS, the stand-in
/// as OpenCode at home, a real ntfy server (Debian 13's; cancelled with the reason without one) and
/// a scripted phone. The push is saved as the profile's `push` (both ends' default), and
/// `config show` prints a profile that holds only a push; `tunnel up` pushes through the saved push with no flag.
@Suite("home up --push: the phone's buttons answer, the push saved", .serialized, .ownThreads, .timeLimit(.minutes(3)))
struct HomePushCommandTests {
    @Test(
        "home up --push --save: a permission pushed with 3 buttons, Reject reaches OpenCode once; the push saved; no password in any push"
    )
    func homeUpPushes() async throws {
        guard NtfyServer.located.root != nil else { try Test.cancel(Comment(rawValue: NtfyServer.located.reason)) }
        let server = try NtfyServer()
        let password = "pw-\(UUID().uuidString.prefix(8))-planted"
        let backend = try OpenCodeStandIn(flavor: "opencode2", password: password)
        defer { backend.stop() }
        let fixture = try TunnelFixture()
        let scratch = try TempDirectory()
        try scratch.write("pw", password + "\n", mode: 0o600)
        let topic = server.url + "/" + PushSettings.newTopic(prefix: "oc-")
        let (home, _) = try await fixture.homeUpListening(
            homePort: backend.port,
            extra: ["--password-file", scratch.file("pw"), "--push", topic, "--push-detail", "full", "--save"])
        defer { home.stopGracefullyOrKill() }
        try #require(try await offPool { NotifyTests.followerListens(backend, home) }, "\(home.stderrText)")

        let id = try #require(backend.askPermission(session: "s3", patterns: ["git push"]))
        let phone = NtfyPhone(topicURL: topic)
        let status = try await offPool { () -> Int in
            let buttons = NtfyPhone.actions(try phone.waitForMessages(1)[0])
            #expect(buttons.map { $0["label"] as? String } == ["Allow once", "Allow always", "Reject"], "\(buttons)")
            return try phone.tap(buttons[2])
        }
        #expect(status == 200)
        #expect(try await offPool { waitUntil(timeout: 20) { backend.replies.count == 1 } }, "\(home.stderrText)")
        #expect(backend.replies.first?["body"] as? String == #"{"reply":"reject"}"#, "\(backend.replies)")
        #expect(
            try await offPool { home.waitForLine(containing: "push: \(id) rejected from the phone") } != nil,
            "\(home.stderrText)")
        #expect(!server.storedBytes().contains(password) && !home.stderrText.contains(password))

        let saved = try PushSettings.load(directory: OctunnelDirectory(path: fixture.home.path), profile: .default)
        #expect(saved?.url.text() == topic && saved?.detail == .full, "\(String(describing: saved))")
        let shown = try fixture.run(["config", "show"])
        #expect(shown.status == 0 && shown.stdout.contains("\"push\"") && shown.stdout.contains("\"home\""), "\(shown)")

        // Idle with the push on: every thread's context switches over 10 s (as scripts/idle-wakeups.sh counts
        // them), with the fixture's ntfy keepalive every 5 s (a real server's: 45 s) and the stand-in's heartbeat every 10 s.
        let before = Self.switches(home.pid)
        try await Task.sleep(for: .seconds(10))
        let rate = Double(Self.switches(home.pid) - before) / 10
        #expect(rate < 5, "a hang guard only: \(rate) wake-ups a second")
        print("home up with the push on, idle: \(rate) context switches a second (ntfy keepalive every 5 s)")
    }

    /// Voluntary and involuntary context switches of every thread of `pid` so far.
    static func switches(_ pid: pid_t) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return total
                + status.split(separator: "\n").filter { $0.contains("ctxt_switches") }
                .compactMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }.reduce(
                    0, +)
        }
    }

    @Test(
        "config show prints a profile that holds only a push (push setup's), and push flags without a push are one line, exit 64"
    )
    func pushOnlyProfileAndMistakes() throws {
        let home = try TempDirectory("octunnel-push-home")
        let settings = PushSettings(
            url: try PushURL.parse("https://ntfy.example.org/oc-abc"),
            replyTopic: PushSettings.newTopic(prefix: "oc-reply-"))
        try settings.save(directory: OctunnelDirectory(path: home.path), profile: .default)
        let shown = try run(octunnelBinary, ["config", "show", "--home", home.path])
        #expect(shown.status == 0 && shown.stdout.contains("ntfy.example.org"), "\(shown)")
        let named = try run(octunnelBinary, ["config", "show", "--home", home.path, "--profile", "default"])
        #expect(named.status == 0 && named.stdout.contains("oc-abc"), "\(named)")

        let empty = try TempDirectory("octunnel-push-home")
        let detail = try run(
            octunnelBinary, ["home", "up", "me@127.0.0.1:1", "--home", empty.path, "--push-detail", "full"])
        #expect(detail.status == 64 && detail.stderr.split(separator: "\n").count == 1, "\(detail)")
        let noTopic = try run(
            octunnelBinary, ["tunnel", "up", "me@127.0.0.1:1", "--home", empty.path, "--push", "http://127.0.0.1:9"])
        #expect(noTopic.status == 64 && noTopic.stderr.contains("--push needs a topic"), "\(noTopic)")
        let off = try run(
            octunnelBinary,
            ["home", "up", "me@127.0.0.1:1", "--home", empty.path, "--no-notify", "--push", "http://127.0.0.1:9/t"])
        #expect(off.status == 64 && off.stderr.split(separator: "\n").count == 1, "\(off)")
    }

    @Test(
        "tunnel up with no push flag pushes through the profile's saved push (push setup's); Allow once tapped reaches OpenCode once"
    )
    func tunnelUpUsesSavedPush() async throws {
        guard NtfyServer.located.root != nil else { try Test.cancel(Comment(rawValue: NtfyServer.located.reason)) }
        let server = try NtfyServer()
        try await NotifyTests.withStandIn { backend, password, fixture, _ in
            let settings = PushSettings(
                url: try PushURL.parse(server.url + "/" + PushSettings.newTopic(prefix: "oc-")),
                replyTopic: PushSettings.newTopic(prefix: "oc-reply-"))
            try settings.save(directory: OctunnelDirectory(path: fixture.home.path), profile: .default)
            let tunnel = try RunningProcess(
                octunnelBinary,
                [
                    "tunnel", "up", "--home", fixture.home.path, fixture.target, "--local-port", "0",
                    "--remote-port", String(backend.port), "--connect-timeout", "10", "--no-pair-port",
                ],
                environment: inheritedEnvironment.merging(["OPENCODE_PASSWORD": password]) { $1 })
            defer { tunnel.stopGracefullyOrKill() }
            try await NotifyTests.requireFollowing(backend, tunnel)
            let id = try #require(backend.askPermission(session: "s3", patterns: ["git push"]))
            let phone = NtfyPhone(topicURL: settings.url.text())
            let status = try await offPool { () -> Int in
                let message = try phone.waitForMessages(1)[0]
                #expect(message["title"] as? String == "OpenCode asks for permission", "brief by default: \(message)")
                return try phone.tap(NtfyPhone.actions(message)[0])
            }
            #expect(status == 200)
            #expect(try await offPool { waitUntil(timeout: 20) { backend.replies.count == 1 } }, "\(tunnel.stderrText)")
            #expect(backend.replies.first?["body"] as? String == #"{"reply":"once"}"#, "\(backend.replies)")
            #expect(
                try await offPool { tunnel.waitForLine(containing: "push: \(id) allowed once from the phone") } != nil,
                "\(tunnel.stderrText)")
        }
    }
}
