import Foundation
import OCTunnelTestSupport
import Testing

@testable import OCTunnelCore

/// The push against a real ntfy server (Debian 13's 2.11) and a scripted phone that taps the
/// buttons as ntfy's app does. Without a Debian 13 root holding ntfy, each test cancels with the
/// reason (scripts/test.sh's Debian 13 leg runs them once the root is there).
@Suite("the push: a real ntfy server, a scripted phone", .serialized, .timeLimit(.minutes(3)), .ownThreads)
struct PushNtfyTests {
    static let password = "pw-Zq8vKx31-planted"

    /// The answers the answerer was asked to send, in order.
    final class Answers: @unchecked Sendable {
        let lock = NSLock()
        var sent: [(id: String, directory: String?, answer: PushAnswer)] = []
        var said: [String] = []
        func add(_ id: String, _ directory: String?, _ answer: PushAnswer) {
            lock.lock()
            sent.append((id, directory, answer))
            lock.unlock()
        }
        func say(_ line: String) {
            lock.lock()
            said.append(line)
            lock.unlock()
        }
        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return sent.count
        }
        var lines: [String] {
            lock.lock()
            defer { lock.unlock() }
            return said
        }
    }

    static func server(tls: Bool = false, auth: Bool = false) throws -> NtfyServer {
        guard NtfyServer.located.root != nil else { try Test.cancel(Comment(rawValue: NtfyServer.located.reason)) }
        return try NtfyServer(tls: tls, auth: auth)
    }

    static func settings(_ server: NtfyServer, detail: PushDetail = .full) throws -> PushSettings {
        let url = try PushURL.parse(server.url + "/" + PushSettings.newTopic(prefix: "oc-"))
        return PushSettings(
            url: url, replyTopic: PushSettings.newTopic(prefix: "oc-reply-"), caFile: server.tls ? server.caFile : nil,
            detail: detail)
    }

    static func permission(
        _ id: String, title: String = "Fix the login bug", directory: String = "/home/me/project",
        detail: String = "bash: git push origin main"
    ) -> AgentMoment {
        var moment = AgentMoment(
            kind: .permission, sessionID: "ses_1", title: title, directory: directory, detail: detail)
        moment.permissionID = id
        return moment
    }

    /// A channel, its listener started (open), the phone, and the recorder.
    static func listening(
        _ server: NtfyServer, _ settings: PushSettings, token: String? = nil, book: NonceBook = NonceBook(),
        secrets: [String] = [password]
    ) throws -> (PushChannel, ReplyListener, NtfyPhone, Answers) {
        let channel = PushChannel(settings: settings, token: token, secrets: secrets, book: book)
        let answers = Answers()
        let listener = channel.listener(answer: { answers.add($0, $1, $2) }, report: { answers.say($0) })
        listener.backoff = 0.2
        listener.start()
        #expect(listener.waitUntilOpen(timeout: 20))
        let phone = NtfyPhone(topicURL: settings.url.text(), token: token, caFile: settings.caFile)
        return (channel, listener, phone, answers)
    }

    /// A channel to a fresh ntfy server (`detail` as its settings say), its listener open, the phone that reads its
    /// topic and the answerer's recorder: what most tests here start from.
    struct Rig {
        let server: NtfyServer
        let channel: PushChannel
        let listener: ReplyListener
        let phone: NtfyPhone
        let answers: Answers
        var settings: PushSettings { channel.settings }

        init(detail: PushDetail = .full) throws {
            server = try PushNtfyTests.server()
            (channel, listener, phone, answers) = try PushNtfyTests.listening(
                server, try PushNtfyTests.settings(server, detail: detail))
        }

        /// Taps `button` as the phone does; whether the answerer then holds `count` answers (waited for).
        func tap(_ button: [String: Any], reaching count: Int) throws -> Bool {
            try phone.tap(button) == 200 && waitUntil(timeout: 10) { answers.count == count }
        }
    }

    @Test(
        "a permission's push arrives with three buttons; a tap answers once, within a second; its replay sends nothing")
    func tapAnswersOnce() throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        let pushed = Date()
        try rig.channel.push(Self.permission("per_abc123"))
        let message = try rig.phone.waitForMessages(1)[0]
        let arrived = Date().timeIntervalSince(pushed)
        let actions = NtfyPhone.actions(message)
        #expect(actions.map { $0["label"] as? String } == ["Allow once", "Allow always", "Reject"])
        #expect(message["title"] as? String == "OpenCode asks for permission: Fix the login bug (project)")
        let tapped = Date()
        #expect(try rig.tap(actions[1], reaching: 1))
        let answered = Date().timeIntervalSince(tapped)
        #expect(rig.answers.sent.first?.id == "per_abc123" && rig.answers.sent.first?.directory == "/home/me/project")
        #expect(rig.answers.sent.first?.answer == .permission(.always))
        // The same button again, and another button of the same request: nothing more is sent.
        #expect(try rig.phone.tap(actions[1]) == 200)
        #expect(try rig.phone.tap(actions[0]) == 200)
        #expect(waitUntil(timeout: 10) { rig.listener.counts.refused == 2 })
        #expect(rig.answers.count == 1)
        #expect(rig.answers.lines.filter { $0.contains("replayed tap") }.count == 2)
        print(
            "push: on the server \(Int(arrived * 1000)) ms after push(), the tap answered \(Int(answered * 1000)) ms after it was made"
        )
    }

    @Test("1,000 replayed, forged, cross-request and expired taps: 0 answers; the real button still works after them")
    func thousandBadTaps() throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        try rig.channel.push(Self.permission("per_first"))
        try rig.channel.push(Self.permission("per_second"))
        let messages = try rig.phone.waitForMessages(2)
        let first = NtfyPhone.actions(messages[0])
        let second = NtfyPhone.actions(messages[1])
        #expect(try rig.tap(first[0], reaching: 1))
        let used = PushTap.parse(first[0]["body"] as! String)!
        let live = PushTap.parse(second[2]["body"] as! String)!
        let http = PushHTTP()
        for index in 0..<1000 {
            let body: String
            switch index % 3 {
            case 0: body = used.body
            case 1:
                body =
                    PushTap(
                        requestID: "per_second", nonce: NonceBook.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
                    ).body
            default: body = PushTap(requestID: "per_first", nonce: live.nonce).body
            }
            _ = try http.send(PushHTTPRequest(method: "POST", url: rig.settings.replyURL, body: Array(body.utf8)))
        }
        #expect(waitUntil(timeout: 60) { rig.listener.counts.refused == 1000 })
        #expect(rig.answers.count == 1)
        let said = rig.answers.lines
        #expect(said.filter { $0.contains("replayed tap") }.count == 334)
        #expect(said.filter { $0.contains("forged tap") }.count == 333)
        #expect(said.filter { $0.contains("cross-request tap") }.count == 333)
        // The cross-request taps spent nothing: the second request's own button still answers, once.
        #expect(try rig.tap(second[2], reaching: 2))
        #expect(rig.answers.sent.last?.answer == .permission(.reject))

        // Expired: a book whose nonces live no time at all.
        let (expiring, expiringListener, expiringPhone, expiringAnswers) = try Self.listening(
            rig.server, try Self.settings(rig.server),
            book: NonceBook(lifetime: 0))
        defer { expiringListener.stop() }
        try expiring.push(Self.permission("per_late"))
        #expect(try expiringPhone.tap(NtfyPhone.actions(try expiringPhone.waitForMessages(1)[0])[0]) == 200)
        #expect(waitUntil(timeout: 10) { expiringListener.counts.refused == 1 })
        #expect(expiringAnswers.count == 0 && expiringAnswers.lines.contains { $0.contains("expired tap") })
    }

    @Test("the OpenCode password planted in every field appears nowhere ntfy stored, logged or served")
    func passwordNowhere() throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        let pw = Self.password
        try rig.channel.push(
            Self.permission(
                "per_pw", title: "title \(pw)", directory: "/home/\(pw)/x", detail: "bash: echo \(pw) \"\(pw)\""))
        var question = AgentMoment(
            kind: .permission, sessionID: "ses_\(pw)", title: pw, directory: "/\(pw)", detail: "which? \(pw)")
        question.question = AskedQuestion(
            id: "que_1", sessionID: "ses_1", count: 1, multiple: false, labels: ["a \(pw)", "b"])
        try rig.channel.push(question)
        var failed = AgentMoment(
            kind: .failed, sessionID: "ses_2", title: nil, directory: nil, detail: "APIError: key=\(pw)")
        failed.merged = .init(count: 3, otherSessions: 1)
        try rig.channel.push(failed)
        let messages = try rig.phone.waitForMessages(3)
        let served = messages.map { String(decoding: try! JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
            .joined()
        #expect(!served.contains(pw) && served.contains("***"))
        #expect(!rig.server.storedBytes().contains(pw))
        #expect(!rig.server.log.contains(pw))
    }

    @Test("brief detail: only the kind of moment; a permission keeps its buttons, a question shows no option")
    func briefDetail() throws {
        let rig = try Rig(detail: .brief)
        defer { rig.listener.stop() }
        try rig.channel.push(Self.permission("per_brief"))
        var question = AgentMoment(
            kind: .permission, sessionID: "ses_1", title: "Pick a DB", directory: "/srv/app", detail: "Which database?")
        question.question = AskedQuestion(
            id: "que_brief", sessionID: "ses_1", count: 1, multiple: false, labels: ["Postgres", "SQLite"])
        try rig.channel.push(question)
        let messages = try rig.phone.waitForMessages(2)
        let text = messages.map {
            "\($0["title"] ?? "") \($0["message"] ?? "") \(NtfyPhone.actions($0).map { $0["label"] ?? "" })"
        }.joined(
            separator: " ")
        for private_ in [
            "Fix the login bug", "project", "git push", "/home/me", "Pick a DB", "/srv/app", "Which database",
            "Postgres", "SQLite",
        ] {
            #expect(!text.contains(private_), "brief push shows \(private_)")
        }
        #expect(
            messages[0]["title"] as? String == "OpenCode asks for permission"
                && NtfyPhone.actions(messages[0]).count == 3)
        #expect(messages[1]["title"] as? String == "OpenCode asks a question" && NtfyPhone.actions(messages[1]).isEmpty)
        #expect(try rig.tap(NtfyPhone.actions(messages[0])[2], reaching: 1))
    }

    @Test("a single-choice question's options are its buttons; the one tapped is the label sent")
    func questionButtons() throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        var question = AgentMoment(
            kind: .permission, sessionID: "ses_1", title: "Pick a DB", directory: "/srv/app", detail: "Which database?")
        question.question = AskedQuestion(
            id: "que_db", sessionID: "ses_1", count: 1, multiple: false, labels: ["Postgres", "SQLite"])
        try rig.channel.push(question)
        let actions = NtfyPhone.actions(try rig.phone.waitForMessages(1)[0])
        #expect(actions.map { $0["label"] as? String } == ["Postgres", "SQLite", "Dismiss"])
        #expect(try rig.tap(actions[1], reaching: 1))
        #expect(
            rig.answers.sent.first?.id == "que_db" && rig.answers.sent.first?.answer == .question(.answer("SQLite")))
    }

    @Test("answered elsewhere: a follow-up push says so, and the buttons send nothing after it")
    func answeredElsewhere() throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        try rig.channel.push(Self.permission("per_else"))
        let actions = NtfyPhone.actions(try rig.phone.waitForMessages(1)[0])
        try rig.channel.answeredElsewhere(requestID: "per_else")
        let messages = try rig.phone.waitForMessages(2)
        #expect((messages[1]["message"] as? String)?.contains("answered elsewhere") == true)
        #expect(try rig.phone.tap(actions[0]) == 200)
        #expect(waitUntil(timeout: 10) { rig.listener.counts.refused == 1 })
        #expect(rig.answers.count == 0)
    }

    @Test(
        "HTTPS: with the test's CA it works; without it the certificate is refused with one line (exit 82) and nothing is sent"
    )
    func https() throws {
        let server = try Self.server(tls: true)
        var settings = try Self.settings(server)
        var untrusting = settings
        untrusting.caFile = nil
        let refused = PushChannel(settings: untrusting, token: nil, secrets: [])
        #expect(throws: PushError.self) { try refused.push(Self.permission("per_tls")) }
        do { try refused.push(Self.permission("per_tls")) } catch {
            guard case .certificateNotVerified = error else {
                Issue.record("\(error)")
                return
            }
            #expect(error.exitStatus == .pushCertificate && error.errorDescription?.contains("\n") == false)
        }
        let phone = NtfyPhone(topicURL: settings.url.text(), caFile: server.caFile)
        #expect(try phone.messages().isEmpty)
        settings.caFile = server.caFile
        let (channel, listener, trustingPhone, answers) = try Self.listening(server, settings)
        defer { listener.stop() }
        try channel.push(Self.permission("per_tls"))
        #expect(try trustingPhone.tap(NtfyPhone.actions(try trustingPhone.waitForMessages(1)[0])[0]) == 200)
        #expect(waitUntil(timeout: 10) { answers.count == 1 })
    }

    @Test(
        "access control: without the token the server refuses (exit 77); with it, pushes and taps (the token in the button) work"
    )
    func token() throws {
        let server = try Self.server(auth: true)
        let settings = try Self.settings(server)
        let anonymous = PushChannel(settings: settings, token: nil, secrets: [])
        do {
            try anonymous.push(Self.permission("per_auth"))
            Issue.record("a push without a token was taken")
        } catch {
            #expect(error.exitStatus == .permission)
        }
        let (channel, listener, phone, answers) = try Self.listening(server, settings, token: server.token)
        defer { listener.stop() }
        try channel.push(Self.permission("per_auth"))
        let actions = NtfyPhone.actions(try phone.waitForMessages(1)[0])
        #expect((actions[0]["headers"] as? [String: String])?["Authorization"] == "Bearer \(server.token!)")
        #expect(try phone.tap(actions[0]) == 200)
        #expect(waitUntil(timeout: 10) { answers.count == 1 })
    }

    @Test("ntfy cut and back: the reply stream resumes with since= and a tap made before it is back is honoured once")
    func cutAndBack() throws {
        let rig = try Rig()
        defer { rig.listener.stop() }
        rig.listener.backoff = 3
        try rig.channel.push(Self.permission("per_one"))
        try rig.channel.push(Self.permission("per_two"))
        let messages = try rig.phone.waitForMessages(2)
        #expect(try rig.tap(NtfyPhone.actions(messages[0])[0], reaching: 1))
        rig.server.stop()
        #expect(waitUntil(timeout: 20) { rig.answers.lines.contains { $0.contains("reply stream stopped") } })
        try rig.server.start()
        // The listener waits its backoff (3 s) before reading again: this tap lands while it is away.
        #expect(try rig.phone.tap(NtfyPhone.actions(messages[1])[1]) == 200)
        #expect(rig.listener.waitUntilOpen(times: 2, timeout: 30))
        #expect(waitUntil(timeout: 10) { rig.answers.count == 2 })
        #expect(rig.answers.sent.last?.id == "per_two" && rig.answers.sent.last?.answer == .permission(.always))
        #expect(rig.listener.counts.refused == 0)
    }

    /// Both ends on one reply topic (the saved push is both ends' default): a tap on one end's
    /// button answers there once and is passed over by the other end without a word; a forged tap
    /// (no tag, or this end's tag) is still said by each end that checks it.
    @Test("both ends on one reply topic: the other end's taps pass quietly; a forged tap is still said")
    func otherEndsTapsQuiet() throws {
        let server = try Self.server()
        let settings = try Self.settings(server)
        let (home, homeListener, phone, homeAnswers) = try Self.listening(server, settings)
        defer { homeListener.stop() }
        let (_, laptopListener, _, laptopAnswers) = try Self.listening(server, settings)
        defer { laptopListener.stop() }
        try home.push(Self.permission("per_shared"))
        let actions = NtfyPhone.actions(try phone.waitForMessages(1)[0])
        #expect(try phone.tap(actions[0]) == 200)
        #expect(waitUntil(timeout: 10) { homeAnswers.count == 1 && laptopListener.othersTaps == 1 })
        #expect(homeAnswers.sent.first?.answer == .permission(.once))
        let http = PushHTTP()
        let forged = NonceBook.hex((0..<16).map { _ in UInt8.random(in: 0...255) })
        let home3 = PushTap.parse(actions[2]["body"] as! String)!
        for body in [
            PushTap(requestID: "per_shared", nonce: forged).body, "octunnel1 per_shared \(forged) zz",
            PushTap(requestID: "per_shared", nonce: forged, sender: home3.sender).body,
        ] {
            _ = try http.send(PushHTTPRequest(method: "POST", url: settings.replyURL, body: Array(body.utf8)))
        }
        // Home checks the untagged one and its own tag's; the laptop only the untagged one; the bad tag is no tap.
        // The laptop's last message is the one with home's tag (in order on the stream); home's last, its forged line.
        #expect(
            waitUntil(timeout: 10) { laptopListener.othersTaps == 2 }, "the forged tap with home's tag, passed over")
        #expect(
            waitUntil(timeout: 10) { homeAnswers.lines.filter { $0.contains("forged tap") }.count == 2 },
            "\(homeAnswers.lines)")
        #expect(homeListener.counts.refused == 2 && laptopListener.counts.refused == 1)
        #expect(homeAnswers.lines.filter { $0.contains("not a button's tap") }.count == 1, "\(homeAnswers.lines)")
        #expect(laptopAnswers.lines.filter { $0.contains("forged tap") }.count == 1, "\(laptopAnswers.lines)")
        #expect(laptopAnswers.lines.filter { $0.contains("not a button's tap") }.count == 1, "\(laptopAnswers.lines)")
        #expect(laptopAnswers.lines.count == 2, "the home's own tap said nothing on the laptop: \(laptopAnswers.lines)")
        #expect(laptopAnswers.count == 0 && homeAnswers.count == 1)
    }

    /// A publish that reached ntfy while its answer was lost (a relay that throws the first POST's
    /// answer away: scripts/hostile-http.py's lose-first-answer) times out; the retry reads the
    /// topic for the push's own id, finds it and sends nothing, and the copy on the phone answers.
    @Test(
        "a publish whose answer was lost reached ntfy: the retry finds its id and sends nothing; its button still answers"
    )
    func lostAnswerNotDoubled() throws {
        let server = try Self.server()
        let relay = try HostileHTTPServer(mode: "lose-first-answer", arguments: ["--target", String(server.port)])
        defer { relay.stop() }
        let direct = try Self.settings(server)
        let relayed = PushSettings(
            url: try PushURL.parse("http://127.0.0.1:\(relay.port)/\(direct.url.topic ?? "")"),
            replyTopic: direct.replyTopic, detail: .full)
        let channel = PushChannel(settings: relayed, token: nil, secrets: [Self.password], timeout: 2)
        let answers = Answers()
        let listener = channel.listener(answer: { answers.add($0, $1, $2) }, report: { answers.say($0) })
        listener.backoff = 0.2
        listener.start()
        defer { listener.stop() }
        #expect(listener.waitUntilOpen(timeout: 20))
        let phone = NtfyPhone(topicURL: direct.url.text())

        var kept = KeptPush(Self.permission("per_lost"))
        #expect(throws: PushError.self) { _ = try channel.push(&kept) }
        #expect(kept.tried != nil)
        #expect(try phone.waitForMessages(1).count == 1, "the lost publish reached ntfy")
        #expect(try channel.push(&kept) == .foundOnTopic)
        // A kept push whose try never reached ntfy is sent on the retry.
        var never = KeptPush(Self.permission("per_never"))
        never.tried = Date()
        #expect(try channel.push(&never) == .sent)
        let messages = try phone.waitForMessages(2)
        #expect(messages.count == 2, "\(messages.map { $0["title"] ?? "" })")
        #expect((messages.first?["tags"] as? [String])?.contains(kept.tag) == true)
        #expect(try phone.tap(NtfyPhone.actions(messages[0])[0]) == 200)
        #expect(waitUntil(timeout: 10) { answers.count == 1 })
        #expect(answers.sent.first?.id == "per_lost" && answers.sent.first?.answer == .permission(.once))
    }
}
