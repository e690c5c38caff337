import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Where a passphrase is asked, by OpenSSH's rules in readpass.c (ssh's flags: /dev/tty, no stdin).
@Suite("Passphrase prompt: terminal or SSH_ASKPASS, as OpenSSH decides", .ownThreads)
struct PassphrasePromptTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let environment: [String: String]
        let terminal: Bool
        let expected: String
        var testDescription: String { "\(environment.sorted { $0.key < $1.key }) tty=\(terminal) → \(expected)" }
    }

    static let cases: [Case] = [
        Case(environment: [:], terminal: true, expected: "terminal"),
        Case(environment: ["SSH_ASKPASS": "/a"], terminal: true, expected: "terminal"),
        Case(environment: ["SSH_ASKPASS": "/a", "DISPLAY": ":0"], terminal: true, expected: "terminal"),
        Case(environment: ["SSH_ASKPASS": "/a", "DISPLAY": ":0"], terminal: false, expected: "/a"),
        Case(environment: ["SSH_ASKPASS": "/a", "WAYLAND_DISPLAY": "wayland-0"], terminal: false, expected: "/a"),
        Case(environment: ["SSH_ASKPASS": "/a", "DISPLAY": ""], terminal: false, expected: "none"),
        Case(environment: ["SSH_ASKPASS": "/a"], terminal: false, expected: "none"),
        Case(environment: ["SSH_ASKPASS": "/a", "SSH_ASKPASS_REQUIRE": "force"], terminal: true, expected: "/a"),
        Case(environment: ["SSH_ASKPASS": "/a", "SSH_ASKPASS_REQUIRE": "FORCE"], terminal: false, expected: "/a"),
        Case(
            environment: ["SSH_ASKPASS": "/a", "SSH_ASKPASS_REQUIRE": "prefer", "DISPLAY": ":0"], terminal: true,
            expected: "/a"),
        Case(
            environment: ["SSH_ASKPASS": "/a", "SSH_ASKPASS_REQUIRE": "prefer"], terminal: true, expected: "terminal"),
        Case(
            environment: ["SSH_ASKPASS": "/a", "SSH_ASKPASS_REQUIRE": "never", "DISPLAY": ":0"], terminal: true,
            expected: "terminal"),
        Case(
            environment: ["SSH_ASKPASS": "/a", "SSH_ASKPASS_REQUIRE": "never", "DISPLAY": ":0"], terminal: false,
            expected: "none"),
        Case(environment: ["SSH_ASKPASS_REQUIRE": "force"], terminal: false, expected: "/usr/bin/ssh-askpass"),
    ]

    @Test(arguments: cases)
    func channel(_ example: Case) {
        let prompt = PassphrasePrompt(environment: example.environment, hasTerminal: example.terminal)
        switch prompt.channel {
        case .terminal: #expect(example.expected == "terminal")
        case .askpass(let program): #expect(example.expected == program)
        case .none(let reason):
            #expect(example.expected == "none")
            #expect(reason.contains("SSH_ASKPASS"))
        }
    }
}
