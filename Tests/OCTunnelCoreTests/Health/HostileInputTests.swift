import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing
#if canImport(Glibc)
    import Glibc
#endif

@Suite(
    "Hostile input, unit level: the sanitizer, the probe's length parsing, escaped service files, bounded reads",
    .ownThreads)
struct HostileInputTests {
    @Test func controlCharactersAreShownAndSecretsRedacted() {
        let token = Data("opencode:pw-123456".utf8).base64EncodedString()
        let text = "v1\u{1b}[31m red\u{07}\u{9b}2J pw-123456 Basic \(token) \u{202e}evil\r\n"
        let shown = OutsideText.shown(text, secrets: ["pw-123456", token])
        #expect(shown == "v1\\x1b[31m red\\x07\\x9b2J *** Basic *** \\u{202e}evil\\x0d\\x0a")
        #expect(OutsideText.shown(shown) == shown, "not idempotent")
        #expect(OutsideText.shown(String(repeating: "a", count: 600)).count == 513)
        let credentials = OpenCodeCredentials(password: "pw-123456")
        #expect(credentials.shown("x pw-123456 \(token)") == "x *** ***")
    }

    @Test(
        "sshd's debug text in the forbids-to-listen error is shown as OutsideText: no escape byte reaches the terminal")
    func listenRefusalTextIsOutsideText() {
        let error = ForwardError.listenForbidden(
            remoteHost: "127.0.0.1", remotePort: 18080,
            reason: "port forwarding refused\u{1b}]0;pwned\u{07}\u{1b}[2J\u{202e}",
            listenLine: "restrict ssh-ed25519 AAAA")
        let message = error.errorDescription ?? ""
        #expect(
            !message.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 || $0.value == 0x202e },
            "\(message)")
        #expect(message.contains("port forwarding refused\\x1b]0;pwned\\x07\\x1b[2J\\u{202e}"), "\(message)")
    }

    @Test(
        "the password file is read from the descriptor that was checked: a file swapped in after the check is never read"
    )
    func passwordFileSwappedAfterTheCheck() throws {
        let dir = try TempDirectory.holding(
            "octunnel-pw", [("pw", "checked-secret\n", 0o600), ("swapped", "world-readable-other\n", 0o644)])
        let read = try OpenCodeCredentials.readPasswordFile(dir.file("pw")) {
            #expect(rename(dir.file("swapped"), dir.file("pw")) == 0)
        }
        #expect(read == "checked-secret")
        // The swapped-in file, now at the path, is refused as it should be when it is the one opened.
        #expect(throws: PasswordFileError.unsafePasswordFile(path: dir.file("pw"), mode: 0o644)) {
            try OpenCodeCredentials.readPasswordFile(dir.file("pw"))
        }
    }

    @Test func lengthsFromTheNetworkAreCheckedBeforeArithmetic() {
        for bad in ["-1", "+5", "", " ", "7fffffffffffffff", "ffffffffffffffffff", "1g", "0x10"] {
            #expect(HTTPLimits.chunkSize(bad) == nil, "\(bad)")
        }
        #expect(HTTPLimits.chunkSize("1A; name=value") == 26)
        #expect(HTTPLimits.chunkSize("0") == 0)
        for bad in ["-5", "+5", "", "1 2", "99999999999999999999", "5.0"] {
            #expect(HTTPLimits.contentLength(bad) == nil, "\(bad)")
        }
        #expect(HTTPLimits.contentLength("42") == 42)
        for bad in ["-5", "20", "2000", "abc", "099", "+20"] {
            #expect(HTTPLimits.statusCode(bad) == nil, "\(bad)")
        }
        #expect(HTTPLimits.statusCode("200") == 200)
    }

    @Test func anEventWithoutItsBlankLineIsCapped() {
        var reader = ServerSentEventReader(maximumLineLength: 1024, maximumEventSize: 4096)
        let line = Array(("data: " + String(repeating: "y", count: 100) + "\n").utf8)
        #expect(throws: ServerSentEventReader.Failure.eventTooLarge(4096)) {
            for _ in 0..<100 { _ = try reader.feed(line) }
        }
    }

    @Test(arguments: ServiceFormat.allCases)
    func aLineBreakInAPathStaysInsideItsArgument(format: ServiceFormat) throws {
        let home = "/u/oct\nExecStartPre=/bin/touch /tmp/x\n#"
        let definition = ServiceDefinition(
            role: .tunnel, profile: .default, format: format, executable: "/bin/true", octunnelHome: home,
            environment: ["HOME": "/u"])
        #expect(throws: ServiceError.controlCharactersInPath(what: "octunnel's home", path: home)) {
            try definition.validate()
        }
        let text = definition.render()
        let lines = text.split(separator: "\n").map(String.init)
        #expect(!lines.contains { $0.hasPrefix("ExecStartPre") }, "\(text)")
        switch format {
        case .systemd:
            #expect(
                lines.contains(
                    #"ExecStart=/bin/true tunnel up --home "/u/oct\x0aExecStartPre=/bin/touch /tmp/x\x0a#" --profile default"#
                ), "\(text)")
        case .launchd:
            #expect(text.contains("<string>/u/oct&#10;ExecStartPre=/bin/touch /tmp/x&#10;#</string>"), "\(text)")
            let parsed =
                try PropertyListSerialization.propertyList(from: Data(text.utf8), format: nil) as? [String: Any]
            #expect(parsed?["ProgramArguments"] as? [String] == definition.arguments)
        }
    }

    @Test func onlyRegularFilesOfBoundedSizeAreRead() throws {
        try withTemporaryDirectory { dir in
            #expect(mkfifo(dir + "/fifo", 0o600) == 0)
            #expect { try FileBytes.read(dir + "/fifo") } throws: {
                ($0 as? SystemError)?.reason == "it is a FIFO, not a regular file"
            }
            #expect { try FileBytes.read("/dev/zero") } throws: {
                ($0 as? SystemError)?.reason == "it is a character device, not a regular file"
            }
            try writeBytes([UInt8](repeating: 0x20, count: 2 << 20), to: dir + "/big")
            #expect { try FileBytes.read(dir + "/big", limit: 1 << 20) } throws: { ($0 as? SystemError)?.code == EFBIG }

            let home = OctunnelDirectory(path: dir + "/oct")
            try home.prepare()
            try writeBytes([UInt8](repeating: 0x20, count: 2 << 20), to: home.configPath)
            #expect { try ConfigFile(directory: home).read() } throws: { error in
                guard case .cannotRead(_, let reason)? = error as? LocalFileError else { return false }
                return reason.contains("larger than 1 MiB")
            }
            let store = KeyStore(directory: home)
            #expect(mkfifo(store.privateKeyPath, 0o600) == 0)
            #expect(throws: KeyError.badKeyFile(path: store.privateKeyPath, reason: "it is a FIFO, not a regular file"))
            { try store.loadPrivateKey() }
        }
    }
}
