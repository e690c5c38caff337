import Foundation
import OCTunnelTestSupport
import Testing

@testable import OCTunnelCore

/// The push's pure parts: the URL it takes, the nonces, a tap's and a stream line's parsing, the
/// words of each detail, the redaction of a body, the QR code.
@Suite("the push's parts: URL, nonces, taps, words, redaction, QR code", .ownThreads)
struct PushPartsTests {
    @Test("an ntfy URL: http or https, a host, a port, at most one topic segment; anything else is one clear line")
    func urls() throws {
        let url = try PushURL.parse("https://ntfy.example.org/oc-abc_1")
        #expect(url.secure && url.host == "ntfy.example.org" && url.port == 443 && url.topic == "oc-abc_1")
        #expect(
            url.text("/json") == "https://ntfy.example.org/oc-abc_1/json" && url.server == "https://ntfy.example.org")
        let bare = try PushURL.parse("http://127.0.0.1:8080/")
        #expect(bare.topic == nil && bare.port == 8080 && bare.server == "http://127.0.0.1:8080")
        #expect(try PushURL.parse("http://[::1]:81/t").server == "http://[::1]:81")
        for bad in [
            "ftp://x/t", "ntfy.sh/t", "https://u:p@ntfy.sh/t", "https://ntfy.sh/t?x=1", "https://ntfy.sh/a/b",
            "https://ntfy.sh/t#f",
            "https://ntfy.sh/\u{1b}[31m", "https:///t", "https://ntfy.sh:0/t",
            "https://ntfy.sh/" + String(repeating: "a", count: 65),
        ] {
            #expect(throws: PushError.self, "\(bad)") { try PushURL.parse(bad) }
            do { _ = try PushURL.parse(bad) } catch {
                #expect(
                    error.exitStatus == .usage && error.errorDescription?.contains("\u{1b}") == false
                        && error.errorDescription?.contains("\n") == false)
            }
        }
    }

    @Test("nonces: single use per request, bound to their request, expiring, bounded; a guess is forged")
    func nonces() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let book = NonceBook(capacity: 6, lifetime: 60)
        let first = book.issue(
            requestID: "per_a", directory: "/p", answers: [.permission(.once), .permission(.reject)], now: now)
        let second = book.issue(requestID: "per_b", directory: nil, answers: [.permission(.always)], now: now)
        #expect(first.count == 2 && first.allSatisfy { $0.utf8.count == 32 } && Set(first + second).count == 3)
        #expect(book.take(requestID: "per_b", nonce: first[0], now: now) == .failure(.init(.otherRequest)))
        #expect((try? book.take(requestID: "per_a", nonce: first[1], now: now).get())?.answer == .permission(.reject))
        #expect(book.take(requestID: "per_a", nonce: first[1], now: now) == .failure(.init(.replayed)))
        #expect(book.take(requestID: "per_a", nonce: first[0], now: now) == .failure(.init(.replayed)))
        #expect(
            book.take(requestID: "per_a", nonce: String(repeating: "0", count: 32), now: now)
                == .failure(.init(.forged)))
        #expect(book.take(requestID: "per_a", nonce: "zz", now: now) == .failure(.init(.forged)))
        #expect(book.take(requestID: "per_b", nonce: second[0], now: now + 61) == .failure(.init(.expired)))
        #expect(book.take(requestID: "per_b", nonce: second[0], now: now) == .failure(.init(.expired)))
        for index in 0..<10 {
            _ = book.issue(requestID: "per_\(index)", directory: nil, answers: [.permission(.once)], now: now)
        }
        #expect(book.liveCount == 6)
    }

    @Test("a tap is `octunnel1 ID NONCE [SENDER]` and nothing else; a stream line is one of ntfy's events or nothing")
    func parsing() {
        let nonce = String(repeating: "ab", count: 16)
        #expect(PushTap.parse("octunnel1 per_x \(nonce)\n") == PushTap(requestID: "per_x", nonce: nonce))
        let tagged = PushTap(requestID: "per_x", nonce: nonce, sender: "0a1b2c3d")
        #expect(PushTap.parse("octunnel1 per_x \(nonce) 0a1b2c3d") == tagged && PushTap.parse(tagged.body) == tagged)
        #expect(NonceBook().sender != NonceBook().sender && PushTap.isSender(NonceBook().sender))
        for bad in [
            "", "octunnel1 per_x", "octunnel2 per_x \(nonce)", "octunnel1 ../x \(nonce)",
            "octunnel1 per_x \(nonce.uppercased())",
            "octunnel1  per_x \(nonce)", "octunnel1 per_x \(nonce) more", "octunnel1 per_x \(nonce) 0A1B2C3D",
            "octunnel1 per_x \(nonce) 0a1b2c3", "octunnel1 per_x \(nonce) 0a1b2c3d e",
        ] {
            #expect(PushTap.parse(bad) == nil, "\(bad)")
        }
        let line = #"{"id":"Wpvj4Ds6XHXT","time":1795826425,"event":"message","topic":"t","message":"hi"}"#
        #expect(NtfyEvent.parse(line)?.message == "hi" && NtfyEvent.parse(line)?.isMessage == true)
        #expect(NtfyEvent.parse(#"{"id":"a b","time":1,"event":"message"}"#) == nil)
        #expect(NtfyEvent.parse(#"{"id":"a&since=all","time":1,"event":"message"}"#) == nil)
        #expect(NtfyEvent.parse("not json") == nil && NtfyEvent.parse("[1]") == nil)
    }

    @Test("a password in any text, even one JSON escapes, leaves the body as ***")
    func redaction() {
        let secret = "p\"w/\\x"
        let message = NtfyMessage(
            topic: "t", title: "a \(secret)", message: "b \(secret)",
            actions: [.init(label: "c \(secret)", url: "http://h/r", headers: nil, body: "octunnel1 x y")])
        let body = String(decoding: message.body(redacting: [secret]), as: UTF8.self)
        #expect(!body.contains(secret) && !body.contains(#"p\"w\/\\x"#) && !body.contains(#"p\"w/\\x"#))
        #expect(body.components(separatedBy: "***").count == 4)
    }

    @Test("brief says the kind only; full says the session and what is asked")
    func words() {
        var moment = AgentMoment(
            kind: .permission, sessionID: "ses_1", title: "Fix login", directory: "/home/me/app",
            detail: "bash: rm -rf build")
        moment.permissionID = "per_1"
        let brief = PushNotice(detail: .brief).words(for: moment)
        let full = PushNotice(detail: .full).words(for: moment)
        #expect(brief == ("OpenCode asks for permission", "It waits for your answer."))
        #expect(full.title.contains("Fix login") && full.message.contains("rm -rf build"))
        #expect(PushNotice(detail: .brief).answers(for: moment).count == 3)
        moment.merged = .init(count: 4, otherSessions: 0)
        #expect(PushNotice(detail: .full).answers(for: moment).isEmpty)
    }

    @Test(
        "the QR code is libqrencode's: a symbol of a size QR has, finder patterns in place, drawn in half blocks with a quiet zone"
    )
    func qrCode() throws {
        let code = try #require(QRCode("https://ntfy.sh/oc-abcdefghijklmnopqrstuvwxyz"))
        // Version 3 or 4 at level M for 46 bytes (17 + 4 × version modules a side).
        #expect([29, 33].contains(code.width) && code.modules.count == code.width, "\(code.width)")
        let width = code.width
        // A finder pattern's corner is dark in every symbol.
        #expect(code.modules[0][0] && code.modules[0][6] && code.modules[6][0] && !code.modules[1][1])
        let lines = code.terminalLines
        #expect(lines.count == (width + 8 + 1) / 2 && lines.allSatisfy { $0.count == width + 8 })
        #expect(QRCode(String(repeating: "x", count: 4000)) == nil)
    }

    @Test("a new topic: the prefix and 26 base32 characters (128 bits), a valid topic, never the same")
    func topics() {
        let topics = (0..<100).map { _ in PushSettings.newTopic(prefix: "oc-reply-") }
        #expect(Set(topics).count == 100 && topics.allSatisfy { PushURL.isTopic($0) && $0.utf8.count == 9 + 26 })
    }

    @Test(
        "push settings live in profiles.NAME.push: saved beside the tunnel section, which is kept byte for byte, and read back"
    )
    func settingsBesideTheRest() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "octunnel-push-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let home = OctunnelDirectory(path: directory)
        let tunnel: [String: Any] = ["target": "me@vps", "remotePort": 18080, "unknownKey": ["kept": true]]
        let raw: [String: Any] = ["version": 2, "profiles": ["work": ["tunnel": tunnel]]]
        try JSONSerialization.data(withJSONObject: raw).write(to: URL(fileURLWithPath: home.configPath))
        #expect(try PushSettings.load(directory: home, profile: ProfileName("work")) == nil)
        let settings = PushSettings(
            url: try PushURL.parse("https://ntfy.example.org/oc-abc"), replyTopic: "oc-reply-def", tokenFile: "/t",
            detail: .full)
        try settings.save(directory: home, profile: ProfileName("work"))
        #expect(try PushSettings.load(directory: home, profile: ProfileName("work")) == settings)
        #expect(try PushSettings.load(directory: home, profile: .default) == nil)
        let written =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: home.configPath)))
            as? [String: Any]
        let work = (written?["profiles"] as? [String: Any])?["work"] as? [String: Any]
        func text(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
        }
        #expect(try text(work?["tunnel"] ?? [:]) == text(tunnel))
        #expect((work?["push"] as? [String: Any])?["tokenFile"] as? String == "/t")
    }
}
