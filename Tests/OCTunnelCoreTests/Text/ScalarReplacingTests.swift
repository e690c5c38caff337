import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Escapes and redaction compare scalars, not Characters: a quote or a secret followed by a
/// combining mark (one Character) is still a quote or a secret (found by FuzzForwardSpec: a host
/// starting with U+FE0F left a bare `"` in the key line's forced command).
@Suite("escapes and redaction, scalar by scalar", .ownThreads)
struct ScalarReplacingTests {
    @Test("a quote followed by a combining mark is replaced; other text is untouched")
    func replacing() {
        #expect("a\"\u{301}b".replacingScalars("\"", with: "\\\"") == "a\\\"\u{301}b")
        #expect("--\u{301}-".replacingScalars("--", with: "- -") == "- -\u{301}-")
        #expect("plain".replacingScalars("\"", with: "x") == "plain" && "".replacingScalars("a", with: "b").isEmpty)
    }

    @Test("the key line's forced command escapes every quote for sshd, a host starting with a combining mark too")
    func forcedCommand() {
        let command = OctunnelKeyLine.forcedCommand(
            role: .home, ends: [HostPort(host: "\u{FE0F}", port: 3)], tag: nil, added: "20260101")
        let scalars = Array(command.unicodeScalars)
        for index in scalars.indices where scalars[index] == "\"" {
            #expect(index > 0 && scalars[index - 1] == "\\", "a bare quote at scalar \(index)")
        }
    }

    @Test(
        "shell, systemd and XML quoting hold with a combining mark after the quote; a shell reads the word back as written"
    )
    func quoting() throws {
        let word = "it'\u{301}s \"\u{301}x $HOME"
        let shell = try run("/bin/sh", ["-c", "printf '%s|' " + shellQuote(word)])
        let printed = shell.stdout.unicodeScalars.prefix { $0 != "|" } // runProcess may end the text with a line break
        #expect(
            printed.elementsEqual(word.unicodeScalars) && shell.stdout.unicodeScalars.contains("|"),
            "\(shellQuote(word))")
        let unit = SystemdUnit.quote("\"\u{301}x")
        #expect(
            unit.hasPrefix("\"")
                && unit.unicodeScalars.dropFirst().dropLast().enumerated().allSatisfy { offset, scalar in
                    scalar != "\"" || Array(unit.unicodeScalars)[offset] == "\\"
                }, "\(unit)")
        #expect(!LaunchAgent.escape("<\u{301}>\u{301}").unicodeScalars.contains { $0 == "<" || $0 == ">" })
    }

    @Test("a secret followed by a combining mark is redacted all the same")
    func redaction() {
        let shown = OutsideText.shown("curl -u opencode:hunter2\u{301} x", secrets: ["hunter2"])
        #expect(!Self.scalars(shown, contain: "hunter2") && Self.scalars(shown, contain: "opencode:***"), "\(shown)")
    }

    /// Whether `needle`'s scalars occur in `text`'s (Character comparison would hide them).
    static func scalars(_ text: String, contain needle: String) -> Bool {
        let haystack = Array(text.unicodeScalars), wanted = Array(needle.unicodeScalars)
        guard wanted.count <= haystack.count else { return false }
        return (0...(haystack.count - wanted.count)).contains { haystack[$0..<$0 + wanted.count].elementsEqual(wanted) }
    }
}
