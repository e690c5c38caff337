import OCTunnelTestSupport
import OCTunnelCore
import Testing

@Suite("HostPort and SSHTarget parsing")
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

    @Test(arguments: ["@host", "us er@host", "u;x@host", "u/x@host", "-oops@host", "user@", "user@bad host", "user@host:0", "a@b@host"])
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
}
