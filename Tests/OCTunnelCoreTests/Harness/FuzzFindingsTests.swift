import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Whether OutsideText finds nothing left to escape in `text`.
private func isClean(_ text: String) -> Bool { OutsideText.shown(text, limit: Int.max) == text }

/// `text` as the ssh config of a home `dir` (~/.ssh/config).
private func writeSSHConfig(_ text: String, home dir: String) throws {
    try FileManager.default.createDirectory(atPath: dir + "/.ssh", withIntermediateDirectories: true)
    try writeText(text, to: dir + "/.ssh/config")
}

/// `vps` resolved for the user `me` through the ssh config of a home `dir`.
private func resolveVPS(home dir: String) throws -> SSHConfigResolution {
    try SSHConfigResolver(home: dir, sshPath: nil, localUser: "me").resolve("vps")
}

/// What the libFuzzer targets in Tests/Fuzz found, one test per finding (docs/fuzzing.md); each
/// failed on the code before its fix. The fuzzers' own inputs are kept in Tests/Fuzz/Corpus.
@Suite("What the fuzz targets found", .ownThreads)
struct FuzzFindingsTests {
    /// FuzzSSHConfig: an unknown keyword, and an IdentityFile passed over, are listed in a note
    /// ("ignored for vps: …") as they were written, escape codes and all.
    @Test func sshConfigKeywordsInTheIgnoredNoteAreShownEscaped() throws {
        try withTemporaryDirectory { dir in
            try writeSSHConfig(
                "Host vps\n  Pro\u{1b}]0;title\u{07}\0xy yes\n  IdentityFile ~/.ssh/id_\u{1b}[2J\n  Match\u{9b}2J all\n",
                home: dir)
            let resolution = try resolveVPS(home: dir)
            #expect(resolution.ignored == ["pro\\x1b]0;title\\x07\\x00xy", "match\\x9b2j"])
            #expect(resolution.skippedIdentities == ["~/.ssh/id_\\x1b[2J (missing)"])
            #expect((resolution.ignored + resolution.skippedIdentities).allSatisfy(isClean))
        }
    }

    /// FuzzSSHConfig: a User the config sets was quoted raw in the refusal's message.
    @Test func aBadUserInTheSSHConfigIsRefusedInCleanWords() throws {
        try withTemporaryDirectory { dir in
            try writeSSHConfig("Host vps\n  User %\u{01}\u{1b}[2J\n", home: dir)
            #expect {
                try resolveVPS(home: dir)
            } throws: { error in
                guard let error = error as? SSHConfigError, case .badSSHConfig = error,
                    let text = error.errorDescription
                else { return false }
                return isClean(text) && text.contains("\\x1b[2J")
            }
        }
    }

    /// FuzzSSHConfig, the same cause: every TargetParseError quoted what was typed as it was.
    @Test func targetErrorsQuoteTheTargetEscaped() {
        for text in ["\u{1b}[2J@host", "[::1\u{1b}]", "host:\u{1b}[31m", "[\u{9b}]:22", "@\u{07}"] {
            #expect {
                try SSHTarget.parse(text, defaultUser: "me")
            } throws: { error in
                guard let error = error as? TargetParseError else { return false }
                return isClean(error.message)
            }
        }
    }

    /// FuzzPublicKey: a key file's comment is anything; with a line break in it, the line printed
    /// for authorized_keys became two, the second with options of the comment's choosing.
    @Test func aPublicKeyLineIsOneLineWhateverItsComment() {
        let key = SSHPublicKey(
            ed25519: Array(repeating: 7, count: 32), comment: "me\ncommand=\"sh\" ssh-ed25519 AAAA\u{0}\r\u{7f}")
        for line in [
            key.line, restrictedAuthorizedKeysLine(key, remotePort: 4096),
            listenAuthorizedKeysLine(key, remotePort: 4096),
        ] {
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }, "\(line.debugDescription)")
        }
        #expect(key.line.hasSuffix(" me command=\"sh\" ssh-ed25519 AAAA"))
        let again = SSHPublicKey.parse(line: key.line)
        #expect(again?.blob == key.blob && again?.line == key.line)
    }

    /// FuzzEventStream: fields were split on Characters, so a combining mark after the colon,
    /// the space or a NUL hid it: `id` with a NUL was kept, the space stayed, the field was lost.
    @Test func eventStreamFieldsAreSplitOnBytes() throws {
        var reader = ServerSentEventReader()
        let text = "id: 5\0\u{65C}\ndata: \u{301}x\n\nid: 6\ndata:\u{301}\n\n"
        let events = try reader.feed(Array(text.utf8))
        #expect(
            events == [
                ServerSentEvent(data: "\u{301}x", lastEventID: ""), ServerSentEvent(data: "\u{301}", lastEventID: "6"),
            ])
    }

    /// FuzzSettings: config.json's username was never checked, so `-oProxyCommand=…` or a
    /// shell word reached ssh's argument list and the commands octunnel prints.
    @Test(arguments: ["-oProxyCommand=sh", "de?loy", "a b", "", "me;reboot"])
    func aSavedUsernameIsChecked(username: String) throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/octunnel")
            _ = try home.prepare()
            let section =
                "{\"host\":\"vps\",\"port\":22,\"username\":\(String(data: try JSONEncoder().encode(username), encoding: .utf8)!),\"remotePort\":4096,\"localPort\":4096,\"homePort\":4096}"
            try writeText("{\"version\":2,\"profiles\":{\"default\":{\"tunnel\":\(section)}}}", to: home.configPath)
            #expect {
                try SavedSettings.load(from: home)
            } throws: { error in
                guard let error = error as? LocalFileError, case .badConfig = error else { return false }
                return isClean(error.errorDescription ?? "")
            }
        }
    }

    /// FuzzStatusReply: `status` printed the reply's strings (cipher, MAC, last error…) as the
    /// answering process wrote them, a zero-width joiner or an escape code included.
    @Test func statusLinesShowTheReplyEscaped() throws {
        let reply =
            #"{"role":"tunnel","profile":"default","pid":1,"state":"connected","target":"me@vps:22","hostKey":"SHA256:abc","#
            + #""mac":"hmac\u200da2-256","lastError":"closed \u001b]0;owned\u0007","reconnects":1}"#
        let snapshot = try #require(StatusSnapshot(jsonText: reply))
        let lines = snapshot.humanLines(now: Date())
        #expect(lines.allSatisfy(isClean), "\(lines)")
        #expect(lines.contains { $0.contains("hmac\\u{200d}a2-256") })
    }

    /// FuzzSSHConfig: the refused ProxyCommand, and a Port that is not a number, were quoted as
    /// the config wrote them.
    @Test(arguments: [
        ("ProxyCommand ssh -W %h\u{2028}:%p \u{1b}[8m", "ssh -W %h\\u{2028}:%p \\x1b[8m"),
        ("Port 22\0\u{1b}[8m", "22\\x00\\x1b[8m"),
    ])
    func configValuesInRefusalsAreQuotedEscaped(line: String, shown: String) throws {
        try withTemporaryDirectory { dir in
            try writeSSHConfig("Host vps\n  \(line)\n", home: dir)
            #expect {
                try resolveVPS(home: dir)
            } throws: { error in
                guard let error = octunnelFailure(error), let text = error.errorDescription else { return false }
                return isClean(text) && text.contains(shown)
            }
        }
    }

    /// FuzzHealthAnswer: a forged home gateway 502 named a home address with a zero-width
    /// joiner in it, and the health test's message showed it as it came.
    @Test func aGatewayAnswerNamesNoHomeThatWouldNotPrintAsItself() {
        let body = Array(#"{"octunnel":"home","home":"127.0.0.\u200d096","error":"refused","fix":"start it"}"#.utf8)
        let answer = HomeGatewayAnswer.parse(status: 502, body: body)
        #expect(answer?.home == HostPort(host: Defaults.homeHost, port: Defaults.homePort))
        #expect(
            HomeGatewayAnswer.parse(status: 502, body: Array(#"{"octunnel":"home","home":"[::1]:5000"}"#.utf8))?.home
                == HostPort(host: "::1", port: 5000))
    }

    /// FuzzSettings: a key written twice in a section (`port` here) read its first value when
    /// config.json was first read through JSONDecoder; JSONSerialization, and octunnel before and
    /// since, read the last. Kept in the corpus as FuzzSettings/repeated-key.
    @Test func aKeyWrittenTwiceInConfigReadsItsLastValue() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir)
            try writeText(
                #"{"version":2,"profiles":{"default":{"home":{"host":"vps","port":2222,"username":"h","port":22,"#
                    + #""remotePort":5000,"homePort":4096}}}}"#, to: home.configPath)
            #expect(try SavedSettings.load(from: home)?.home?.port == 22)
        }
    }

    /// FuzzSettings: a profile name in config.json was quoted raw in the refusal (U+0085 here).
    @Test func aBadProfileNameInConfigJSONIsQuotedEscaped() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/octunnel")
            _ = try home.prepare()
            try writeText(#"{"version":2,"profiles":{"\u0085work\u001b[2J":{}}}"#, to: home.configPath)
            #expect {
                try SavedSettings.load(from: home)
            } throws: { error in
                guard let error = error as? LocalFileError, case .badConfig = error, let text = error.errorDescription
                else { return false }
                return isClean(text) && text.contains("\\x85work\\x1b[2J")
            }
        }
    }

    /// FuzzEncryptedKey: a first line such as `-----BEGIN OPENSSH PRIVATEopenssh-key-v1\0…` was
    /// quoted raw in "it is a PEM key (…)"; so were key type and cipher names from the file.
    @Test func keyFileReasonsQuoteTheFileEscaped() {
        for text in ["-----BEGIN OPENSSH PRIVATE\u{0}\u{1b}[2J-----\nAAAA\n", "-----BEGIN RSA\u{9b}31m KEY-----\n"] {
            #expect {
                try OpenSSHPrivateKey.decode(text)
            } throws: { error in
                guard let error = error as? KeyFormatError else { return false }
                return isClean(error.reason) && error.reason.contains("\\x")
            }
        }
    }

    /// FuzzStatusReply, in its long run: a reply with dates that do not parse took ~100 ms in
    /// the fuzz build, two new ISO 8601 formatters per date tried (ICU makes each in
    /// milliseconds), on every read and write; `reconnect` reads one every 50-250 ms. They are
    /// made once now, so dates cost little next to the rest of a reply (measured side by side,
    /// in turns, so the machine's load weighs on both: 3 times the cost without dates before).
    @Test func statusRepliesAreReadWithoutMakingFormatters() throws {
        let head = #"{"role":"tunnel","profile":"default","pid":1,"state":"connected","target":"me@vps:22""#
        let dated =
            head
            + #","connectedSince":"x","lastErrorAt":"2026-11-22T15:25:23Z","lastNetworkEventAt":"y","health":{"ok":true,"checkedAt":"z"}}"#
        var seconds = (dated: 0.0, plain: 0.0)
        for _ in 0..<4 {
            for (reply, isDated) in [(dated, true), (head + "}", false)] {
                let started = Date()
                for _ in 0..<50 { _ = try #require(StatusSnapshot(jsonText: reply)).jsonText }
                if isDated {
                    seconds.dated += Date().timeIntervalSince(started)
                } else {
                    seconds.plain += Date().timeIntervalSince(started)
                }
            }
        }
        #expect(seconds.dated < 2.5 * seconds.plain, "\(seconds)")
    }
}
