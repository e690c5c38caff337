import Foundation
import OCTunnelTestSupport
import Testing

@testable import OCTunnelCore

/// `--push` and its options laid over the profile's saved push (`PushChoices`), as `tunnel up` and
/// `home up` resolve them, and what `--save` writes.
@Suite("push flags over the saved push", .ownThreads)
struct PushChoicesTests {
    @Test("nothing typed or saved: no push; options without a push, or a URL without a topic: a usage error")
    func noneAndMistakes() throws {
        let home = OctunnelDirectory(path: try TempDirectory("octunnel-push-choices").path)
        #expect(try PushChoices().resolve(directory: home, profile: .default, save: true) == nil)
        #expect(throws: PushError.self) {
            try PushChoices(detail: .full).resolve(directory: home, profile: .default, save: false)
        }
        do {
            _ = try PushChoices(url: "http://127.0.0.1:9").resolve(directory: home, profile: .default, save: false)
            Issue.record("a URL without a topic was taken")
        } catch {
            #expect(error.exitStatus == .usage && error.localizedDescription.contains("--push needs a topic"))
        }
        #expect(!FileManager.default.fileExists(atPath: home.configPath))
    }

    @Test(
        "the saved push is the default; the same topic keeps its reply topic, another on the same server its token, another server neither"
    )
    func overTheSaved() throws {
        let scratch = try TempDirectory("octunnel-push-choices")
        let home = OctunnelDirectory(path: scratch.path)
        try scratch.write("token", "tk_abc123\n", mode: 0o600)
        let saved = PushSettings(
            url: try PushURL.parse("https://ntfy.example.org/oc-mine"), replyTopic: "oc-reply-saved",
            tokenFile: scratch.file("token"), detail: .full)
        try saved.save(directory: home, profile: .default)

        let plain = try #require(try PushChoices().resolve(directory: home, profile: .default, save: true))
        #expect(plain.settings == saved && plain.token == "tk_abc123")
        let same = try #require(
            try PushChoices(url: "https://ntfy.example.org/oc-mine", detail: .brief)
                .resolve(directory: home, profile: .default, save: false))
        #expect(
            same.settings.replyTopic == "oc-reply-saved" && same.settings.detail == .brief && same.token == "tk_abc123")
        let other = try #require(
            try PushChoices(url: "https://ntfy.example.org/oc-other").resolve(
                directory: home, profile: .default, save: false))
        #expect(other.settings.replyTopic != "oc-reply-saved" && PushURL.isTopic(other.settings.replyTopic))
        #expect(other.settings.tokenFile == saved.tokenFile && other.settings.detail == .full)
        let elsewhere = try #require(
            try PushChoices(url: "http://127.0.0.1:8080/oc-t").resolve(directory: home, profile: .default, save: false))
        #expect(elsewhere.settings.tokenFile == nil && elsewhere.token == nil)
        #expect(
            try PushSettings.load(directory: home, profile: .default) == saved,
            "nothing saved without --save or with no flag")

        let kept = try #require(
            try PushChoices(url: "http://127.0.0.1:8080/oc-t").resolve(directory: home, profile: .default, save: true))
        #expect(try PushSettings.load(directory: home, profile: .default) == kept.settings)
    }
}
