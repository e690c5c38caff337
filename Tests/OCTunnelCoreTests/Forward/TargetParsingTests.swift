import OCTunnelTestSupport
import OCTunnelCore
import Testing

@Suite("HostPort and SSHTarget parsing", .ownThreads)
struct TargetParsingTests {
    @Test(arguments: [
        ("host", "host", 22),
        ("host:2222", "host", 2222),
        ("vps.example.com:1", "vps.example.com", 1),
        ("10.0.0.1:65535", "10.0.0.1", 65535),
        ("[::1]:2222", "::1", 2222),
        ("::1", "::1", 22),
        ("[2001:db8::1]", "2001:db8::1", 22),
        ("2001:db8::1", "2001:db8::1", 22),
        ("[vps]:2200", "vps", 2200),
    ])
    func parsesHostAndPort(text: String, host: String, port: Int) throws {
        let parsed = try HostPort.parse(text)
        #expect(parsed == HostPort(host: host, port: port))
    }

    @Test(arguments: [
        "host:0", "host:65536", "host:99999", "host:abc", "host:", "host:-1", "host:+22", "host:022222",
        "", ":22", "[::1", "[::1]2222", "[::1]:", "[]:22", "[]",
        "bad host", "a,b", "a,b:22", "host\t", "-oProxyCommand=x", "host/path", "user@host", "*.example.com",
    ])
    func rejectsBadHostPorts(text: String) {
        #expect(throws: TargetParseError.self) { try HostPort.parse(text) }
    }

    @Test func portErrorsSayWhatIsWrong() throws {
        let outOfRange = #expect(throws: TargetParseError.self) { try HostPort.parse("host:65536") }
        #expect(outOfRange?.message.contains("out of range") == true)
        let notNumber = #expect(throws: TargetParseError.self) { try HostPort.parse("host:abc") }
        #expect(notNumber?.message.contains("not a number") == true)
        #expect(try HostPort.parsePort("0", allowZero: true) == 0)
    }

    @Test(arguments: [
        ("user@host", "user", "host", 22),
        ("user@host:2222", "user", "host", 2222),
        ("user@[2001:db8::1]:2222", "user", "2001:db8::1", 2222),
        ("deploy_bot-1.x@[::1]", "deploy_bot-1.x", "::1", 22),
        ("host", "default-user", "host", 22),
        ("[::1]:2222", "default-user", "::1", 2222),
    ])
    func parsesTargets(text: String, user: String, host: String, port: Int) throws {
        let target = try SSHTarget.parse(text, defaultUser: "default-user")
        #expect(target == SSHTarget(user: user, host: host, port: port))
    }

    @Test func theDefaultUserIsTheLoginName() throws {
        #expect(try SSHTarget.parse("host").user == currentUserName())
        #expect(!currentUserName().isEmpty)
    }

    @Test(arguments: [
        "@host", "us er@host", "u;x@host", "u/x@host", "-oops@host", "user@", "user@bad host", "user@host:0",
        "a@b@host",
    ])
    func rejectsBadTargets(text: String) {
        #expect(throws: TargetParseError.self) { try SSHTarget.parse(text, defaultUser: "me") }
    }

    @Test func knownHostsNameIsBareForPort22AndBracketedOtherwise() {
        #expect(HostPort(host: "host", port: 22).knownHostsName == "host")
        #expect(HostPort(host: "host", port: 2222).knownHostsName == "[host]:2222")
        #expect(HostPort(host: "127.0.0.1", port: 2222).knownHostsName == "[127.0.0.1]:2222")
        #expect(HostPort(host: "::1", port: 22).knownHostsName == "::1")
        #expect(HostPort(host: "::1", port: 2222).knownHostsName == "[::1]:2222")
        #expect(HostPort(host: "VPS.Example.COM", port: 22).knownHostsName == "vps.example.com")
    }

    @Test func descriptionsBracketIPv6() throws {
        #expect(HostPort(host: "::1", port: 2222).description == "[::1]:2222")
        #expect(HostPort(host: "host", port: 22).description == "host:22")
        #expect(SSHTarget(user: "u", host: "2001:db8::1", port: 22).description == "u@[2001:db8::1]:22")
        let target = try SSHTarget.parse("u@[::1]:2222", defaultUser: "me")
        #expect(try SSHTarget.parse(target.description, defaultUser: "me") == target)
    }

    // Found by scripts/fuzz.sh (FuzzTarget). A combining mark joins the character before it into
    // one Character: `>` + U+065C is not `>`, so a Character-level check let `>` through.
    @Test(
        arguments: [
            [0xA5, 0x3E, 0xD9, 0x9C], // the fuzzer's input: invalid byte, `>`, U+065C
            [0x76, 0x70, 0x73, 0x27, 0xCC, 0x81], // vps'́
            [0x61, 0x20, 0xCC, 0x81, 0x62], // a ́b
            [0x2D, 0xCC, 0x81, 0x6F, 0x50, 0x72, 0x6F, 0x78, 0x79], // -́oProxy
        ] as [[UInt8]])
    func rejectsForbiddenCharactersHiddenByACombiningMark(bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(throws: TargetParseError.self) { try HostPort.parse(text) }
        #expect(throws: TargetParseError.self) { try SSHTarget.parse(text, defaultUser: "me") }
    }

    // Found by scripts/fuzz.sh (FuzzTarget): a host starting with a combining mark (U+06DF) fused
    // with the `@` of its own rendering, so `fuzz@host` parsed back as host `fuzz@host`.
    @Test func aHostStartingWithACombiningMarkRoundTrips() throws {
        let text = String(decoding: [0xDB, 0x9F, 0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD] as [UInt8], as: UTF8.self)
        let target = try SSHTarget.parse(text, defaultUser: "fuzz")
        #expect(target.user == "fuzz")
        #expect(try SSHTarget.parse(target.description, defaultUser: "other") == target)
        let hostPort = try HostPort.parse("[\u{301}a:b]:2222")
        #expect(hostPort == HostPort(host: "\u{301}a:b", port: 2222))
        #expect(try HostPort.parse(hostPort.description) == hostPort)
    }

    // Found while fixing the above: a host ending in a prepend mark (U+0600) fused with the space
    // after it, so the known_hosts line written for it was unreadable.
    @Test func aHostEndingInAPrependMarkMakesAReadableKnownHostsLine() throws {
        let name = HostPort(host: "a\u{600}", port: 22).knownHostsName
        let line = Array(
            "\(name) ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGu0GX1RyWrk2yQzh3rGEiLa34WO6ZWkTuZGJ3UfWZ0+".utf8)
        let entry = try #require(KnownHostsFile(bytes: line).entries.first?.entry)
        #expect(entry.hosts == name)
        #expect(entry.match(name) == .exact)
    }

    // Found by scripts/fuzz.sh (FuzzTarget, with its dictionary): a host of Unicode white space
    // (U+3000) was accepted, and known_hosts trims it, so the line recorded for it was unreadable.
    @Test(
        arguments: [
            [0xE3, 0x80, 0x80], [0x76, 0x70, 0x73, 0xC2, 0xA0], [0xE2, 0x80, 0x83, 0x76, 0x70, 0x73],
            [0x61, 0xE2, 0x80, 0xA8, 0x62],
        ] as [[UInt8]])
    func rejectsUnicodeWhiteSpaceInHosts(bytes: [UInt8]) {
        #expect(throws: TargetParseError.self) { try HostPort.parse(String(decoding: bytes, as: UTF8.self)) }
    }

    // Found by scripts/fuzz.sh (FuzzTarget): the host U+200B `c` was accepted, but known_hosts
    // trimmed U+200B (Foundation's `.whitespaces`), so the line recorded for it named `c`. Now
    // every format character is refused (issue 46: U+202E and U+200B reached printed key lines),
    // naming it.
    @Test(
        arguments: [
            ([0xE2, 0x80, 0x8B, 0x63], "U+200B"), ([0x61, 0xE2, 0x80, 0xAE, 0x62], "U+202E"),
            ([0x61, 0xE2, 0x81, 0xA6], "U+2066"),
            ([0xEF, 0xBB, 0xBF, 0x61], "U+FEFF"), ([0x61, 0xC2, 0xAD], "U+00AD"),
        ] as [([UInt8], String)])
    func refusesFormatCharactersNamingThem(bytes: [UInt8], name: String) {
        #expect { try HostPort.parse(String(decoding: bytes, as: UTF8.self)) } throws: { error in
            (error as? TargetParseError)?.message.contains("contains \(name), an invisible format character") == true
        }
    }

    @Test("~ in a host is refused: a shell would expand it where the host lands in a forced command")
    func refusesTilde() {
        for text in ["~user", "~", "a~b", "[~]:22"] {
            #expect(throws: TargetParseError.self) { try HostPort.parse(text) }
        }
        #expect(throws: TargetParseError.self) {
            try Forward.parse("~user:18084:127.0.0.1:3000", direction: .remote, defaultBind: "127.0.0.1")
        }
    }

    @Test(
        "localhost as a -L listen is 127.0.0.1, resolved at validation; a name there is refused at validation, not at listen; a name that looks like loopback is not loopback"
    )
    func localListenAddresses() throws {
        #expect(
            try Forward.parse("localhost:3000:127.0.0.1:3000", direction: .local, defaultBind: "127.0.0.1").listen
                == HostPort(host: "127.0.0.1", port: 3000))
        #expect(
            try Forward.parse("[::1]:3000:127.0.0.1:3000", direction: .local, defaultBind: "127.0.0.1").listen
                == HostPort(host: "::1", port: 3000))
        #expect {
            try Forward.parse("example.com:3000:127.0.0.1:3000", direction: .local, defaultBind: "127.0.0.1")
        } throws: { error in
            (error as? TargetParseError)?.message.contains("which is not an IP address of this machine") == true
        }
        #expect(
            try Forward.parse("localhost:18081:127.0.0.1:3000", direction: .remote, defaultBind: "127.0.0.1").listen
                .host == "localhost",
            "the VPS's sshd resolves a -R listen")
        #expect(
            Sockets.isLoopback("127.0.0.1") && Sockets.isLoopback("127.9.9.9") && Sockets.isLoopback("::1")
                && Sockets.isLoopback("::ffff:127.0.0.1"))
        #expect(
            !Sockets.isLoopback("127.example.com") && !Sockets.isLoopback("10.0.0.1")
                && !Sockets.isLoopback("localhost") && !Sockets.isLoopback("::"))
    }
}
