import Foundation
import OCTunnelTestSupport
import Testing

@testable import OCTunnelCore

/// `home up` with the push on (issue 54): the running `up`'s wiring (`UpWiring`, `HomeFollowing`)
/// pointed at OpenCode on this machine (the stand-in, both generations), the push as one more
/// channel (`NotifyOptions.push`) to a real ntfy server (Debian 13's 2.11), and a scripted phone
/// that taps the buttons as ntfy's app does. Without a Debian 13 root holding ntfy, each test
/// cancels with the reason (scripts/test.sh's Debian 13 leg runs them).
@Suite("home up pushes to a phone and its buttons answer", .serialized, .ownThreads, .timeLimit(.minutes(3)))
struct HomePushTests {
    /// A running `home up` following `backend` and pushing through `server`.
    struct Running {
        let started: FollowingHome
        let phone: NtfyPhone
        let home: HostPort
        var following: HomeFollowing { started.following }
        var lines: EngineEventLines { started.lines }
    }

    static func start(
        _ backend: OpenCodeStandIn, _ server: NtfyServer, password: String, settings given: PushSettings? = nil,
        yields: Bool = false
    ) throws -> Running {
        let home = HostPort(host: "127.0.0.1", port: backend.port)
        let settings =
            try given
            ?? PushSettings(
                url: try PushURL.parse(server.url + "/" + PushSettings.newTopic(prefix: "oc-")),
                replyTopic: PushSettings.newTopic(prefix: "oc-reply-"), detail: .full)
        var notify = NotifyOptions()
        notify.desktop = false
        notify.push = PushRun(settings: settings, token: nil, yields: yields)
        let wiring = UpWiring(notify: notify, credentials: OpenCodeCredentials(password: password), pairPort: nil)
        let started = try FollowingHome.start(home: home, wiring: wiring)
        return Running(started: started, phone: NtfyPhone(topicURL: settings.url.text()), home: home)
    }

    /// A test's start: a fresh ntfy server (without Debian 13's, the test cancels with the reason), OpenCode's stand-in of
    /// `flavor` holding a password planted to be looked for, and `home up` following it and pushing (`waited`: once it
    /// follows the stand-in's one event stream).
    struct Scene {
        let server: NtfyServer
        let password: String
        let backend: OpenCodeStandIn
        let run: Running

        /// Stops `home up`, then the stand-in.
        func stop() {
            run.following.stop()
            backend.stop()
        }
    }

    static func scene(_ flavor: String, waited: Bool = true) throws -> Scene {
        guard NtfyServer.located.root != nil else { try Test.cancel(Comment(rawValue: NtfyServer.located.reason)) }
        let server = try NtfyServer()
        let password = "pw-\(UUID().uuidString.prefix(8))-planted"
        let backend = try OpenCodeStandIn(flavor: flavor, password: password)
        let run: Running
        do { run = try start(backend, server, password: password) } catch {
            backend.stop()
            throw error
        }
        let scene = Scene(server: server, password: password, backend: backend, run: run)
        guard waited else { return scene }
        do {
            try #require(run.started.follows(backend), "\(run.lines.text)")
        } catch {
            scene.stop()
            throw error
        }
        return scene
    }

    /// A `scene` of `flavor` (waited for) for `body`, stopped after it.
    static func withScene(_ flavor: String, _ body: (Scene) throws -> Void) throws {
        let scene = try scene(flavor)
        defer { scene.stop() }
        try body(scene)
    }

    /// The first message whose title starts with `prefix` (waited for).
    static func message(_ phone: NtfyPhone, titled prefix: String, after count: Int = 0) -> [String: Any]? {
        var found: [String: Any]?
        _ = waitUntil(timeout: 20) {
            found = ((try? phone.messages()) ?? []).dropFirst(count).first {
                ($0["title"] as? String)?.hasPrefix(prefix) == true
            }
            return found != nil
        }
        return found
    }

    /// A permission asked at home: one push with 3 buttons, the tap reaches OpenCode once (its replay nothing); a question's
    /// option; answered elsewhere first: a follow-up push and the button sends nothing; a finish and a failure pushed once; no
    /// password anywhere.
    @Test(
        "permission, question, answered elsewhere, finish and failure: pushed once each, every button once",
        arguments: ["opencode1", "opencode2"])
    func pushesAndAnswers(flavor: String) throws {
        let scene = try Self.scene(flavor)
        defer { scene.stop() }
        let (server, password, backend, phone, lines) = (
            scene.server, scene.password, scene.backend, scene.run.phone, scene.run.lines
        )

        // A permission: pushed with three buttons; Allow always reaches OpenCode once.
        let asked = Date()
        let id = try #require(backend.askPermission(session: "s3", patterns: ["git push"], title: "Fix the login bug"))
        let pushed = try #require(Self.message(phone, titled: "OpenCode asks for permission"), "\(lines.text)")
        let onServer = Date().timeIntervalSince(asked)
        let buttons = NtfyPhone.actions(pushed)
        #expect(buttons.map { $0["label"] as? String } == ["Allow once", "Allow always", "Reject"])
        let tapped = Date()
        #expect(try phone.tap(buttons[1]) == 200)
        #expect(waitUntil(timeout: 20) { backend.replies.count == 1 }, "\(lines.text)")
        let reached = Date().timeIntervalSince(tapped)
        #expect(backend.replies.first?["body"] as? String == #"{"reply":"always"}"#, "\(backend.replies)")
        #expect(
            waitUntil(timeout: 20) {
                lines.text.contains { $0.hasPrefix("push: \(id) allowed always from the phone") }
            }, "\(lines.text)")
        #expect(try phone.tap(buttons[0]) == 200)
        #expect(
            waitUntil(timeout: 20) {
                lines.text.contains { $0.contains("replayed tap for request \(id) sent nothing") }
            }, "\(lines.text)")
        #expect(backend.replies.count == 1, "\(backend.replies)")

        // A question with options: its second option's button reaches OpenCode as that label.
        let questionID = try #require(
            backend.askQuestion(session: "s3", "Which database?", labels: ["Postgres", "SQLite"])?.id)
        let questionPush = try #require(
            Self.message(phone, titled: "OpenCode asks a question", after: 1), "\(lines.text)")
        let choices = NtfyPhone.actions(questionPush)
        #expect(choices.map { $0["label"] as? String } == ["Postgres", "SQLite", "Dismiss"])
        #expect(try phone.tap(choices[1]) == 200)
        #expect(waitUntil(timeout: 20) { backend.replies.count == 2 }, "\(lines.text)")
        #expect(backend.replies.last?["body"] as? String == #"{"answers":[["SQLite"]]}"#, "\(backend.replies)")
        #expect(
            backend.replies.last?["path"] as? String
                == OpenCodeStandIn.replyPath(flavor: flavor, "question", questionID, session: "s3"))

        // Answered elsewhere first (`octunnel permission reject` at home): a follow-up push; the button then sends nothing.
        let count = try phone.messages().count
        let second = try #require(backend.askPermission(session: "s4", patterns: ["rm -rf build"]))
        let secondPush = try #require(
            Self.message(phone, titled: "OpenCode asks for permission", after: count), "\(lines.text)")
        let client = PermissionClient(
            host: "127.0.0.1", port: backend.port, credentials: OpenCodeCredentials(password: password))
        _ = try client.answer(id: second, reply: .reject, directories: [])
        let followUp = try #require(
            Self.message(phone, titled: "OpenCode: answered elsewhere", after: count), "\(lines.text)")
        #expect((followUp["message"] as? String)?.contains("answered elsewhere") == true)
        #expect(try phone.tap(NtfyPhone.actions(secondPush)[0]) == 200)
        #expect(
            waitUntil(timeout: 20) { lines.text.contains { $0.contains("tap for request \(second) sent nothing") } },
            "\(lines.text)")
        #expect(backend.replies.count == 3, "\(backend.replies)") // the reject only

        // A finish and a failure: pushed once each.
        for event in StandInEvent.finish("s1", title: "Tidy the docs", directory: "/home/me/shop") + [
            StandInEvent.failure("s2", "rate limited")
        ] {
            #expect(backend.post("/standin/emit", event).status == 200)
        }
        #expect(Self.message(phone, titled: "OpenCode failed") != nil, "\(lines.text)")
        #expect(Self.message(phone, titled: "OpenCode finished") != nil, "\(lines.text)")
        let titles = try phone.messages().compactMap { $0["title"] as? String }
        #expect(titles.filter { $0.hasPrefix("OpenCode finished") }.count == 1, "\(titles)")
        #expect(titles.filter { $0.hasPrefix("OpenCode failed") }.count == 1, "\(titles)")
        #expect(
            titles.filter { $0.hasPrefix("OpenCode: answered elsewhere") }.count == 1,
            "the phone's own answers get no follow-up: \(titles)")
        #expect(!server.storedBytes().contains(password))
        #expect(!lines.text.joined().contains(password))
        print(
            "home push (\(flavor)): on the ntfy server \(Int(onServer * 1000)) ms after the permission was asked; "
                + "the tap reached OpenCode \(Int(reached * 1000)) ms after it was made")
    }

    /// ntfy down while the agent asks twice: one warning, and both pushed once soon after it is back
    /// (the reply stream's next try, at most `PushNotificationChannel.Limits.retry` s), both answerable.
    @Test("ntfy down while the agent asks twice: both pushed once within 5 s of its return, and both answerable")
    func ntfyDownAndBack() throws {
        let scene = try Self.scene("opencode2")
        defer { scene.stop() }
        let (server, backend, phone, lines) = (scene.server, scene.backend, scene.run.phone, scene.run.lines)

        server.stop()
        let first = try #require(backend.askPermission(session: "s1", patterns: ["git push"]))
        let second = try #require(backend.askPermission(session: "s2", patterns: ["npm publish"]))
        #expect(
            waitUntil(timeout: 20) { lines.text.contains { $0.hasPrefix("push: ") && $0.contains(server.url) } },
            "\(lines.text)")
        #expect(waitUntil(timeout: 20) { lines.text.filter { $0.hasPrefix("notify: ") }.count == 2 }, "\(lines.text)")
        try server.start()
        let back = Date()
        #expect(waitUntil(timeout: 20) { ((try? phone.messages()) ?? []).count >= 2 }, "\(lines.text)")
        let after = Date().timeIntervalSince(back)
        #expect(after <= 5, "pushed \(after) s after ntfy was back")
        let messages = try phone.messages()
        #expect(messages.count == 2, "\(messages)")
        for (index, message) in messages.enumerated() {
            let buttons = NtfyPhone.actions(message)
            #expect(buttons.count == 3, "\(message)")
            if let once = buttons.first { #expect(try phone.tap(once) == 200) }
            #expect(waitUntil(timeout: 20) { backend.replies.count == index + 1 }, "\(lines.text)")
        }
        let answered = Set(
            backend.replies.compactMap {
                ($0["path"] as? String)?.split(separator: "/").dropLast().last.map(String.init)
            })
        #expect(answered == [first, second], "\(backend.replies)")
        #expect(
            lines.text.filter { $0.hasPrefix("push: ") && $0.contains(server.url) }.count == 1,
            "said once: \(lines.text)")
        print("home push: ntfy back, both kept pushes on it \(Int(after * 1000)) ms later")
    }

    /// Both ends follow one OpenCode and push to one topic (the saved push is both ends' default):
    /// `tunnel up` yields, so a permission appears once on the phone, and its button answers once.
    @Test(
        "both ends pushing to one topic: a permission appears once on the phone (home up's), and its tap answers once")
    func bothEndsOnce() throws {
        let scene = try Self.scene("opencode2", waited: false)
        defer { scene.stop() }
        let (server, password, backend, home) = (scene.server, scene.password, scene.backend, scene.run)
        let settings = PushSettings(
            url: try PushURL.parse(home.phone.topicURL), replyTopic: PushSettings.newTopic(prefix: "oc-reply-"),
            detail: .full)
        let laptop = try Self.start(backend, server, password: password, settings: settings, yields: true)
        defer { laptop.following.stop() }
        try #require(
            waitUntil(timeout: 20) { backend.openStreams().count == 2 },
            "\(home.lines.text) \(laptop.lines.text)")

        let id = try #require(backend.askPermission(session: "s1", patterns: ["git push"]))
        #expect(
            waitUntil(timeout: 20) {
                laptop.lines.text.contains { $0 == "push: \(id) was pushed by the other end already" }
            },
            "\(laptop.lines.text)")
        let messages = try home.phone.messages()
        #expect(messages.count == 1, "\(messages)")
        if let first = messages.first { #expect(try home.phone.tap(NtfyPhone.actions(first)[0]) == 200) }
        #expect(waitUntil(timeout: 20) { backend.replies.count == 1 }, "\(home.lines.text)")
        #expect(
            waitUntil(timeout: 20) {
                home.lines.text.contains { $0.hasPrefix("push: \(id) allowed once from the phone") }
            })
        #expect(backend.replies.count == 1, "\(backend.replies)")

        // Without home up's push, tunnel up's own goes after its wait.
        home.following.stop()
        let alone = try #require(backend.askPermission(session: "s2", patterns: ["npm publish"]))
        #expect(waitUntil(timeout: 20) { ((try? home.phone.messages()) ?? []).count == 2 }, "\(laptop.lines.text)")
        #expect(!laptop.lines.text.contains { $0.contains("\(alone) was pushed by the other end") })
    }
}
