import OCTunnelCore
import Testing

@Suite("a forward as ssh -L and -R write it, and a session's forwards checked together", .ownThreads)
struct ForwardTests {
    @Test(
        "[BIND:]PORT:HOST:HOSTPORT, IPv6 in brackets, the default bind without BIND",
        arguments: [
            ("3000:127.0.0.1:3000", Forward.Direction.local, "127.0.0.1", 3000, "127.0.0.1", 3000),
            ("127.0.0.1:5173:localhost:5173", .local, "127.0.0.1", 5173, "localhost", 5173),
            ("[::1]:8080:[::1]:80", .local, "::1", 8080, "::1", 80),
            ("0:127.0.0.1:4096", .local, "127.0.0.1", 0, "127.0.0.1", 4096),
            ("18081:127.0.0.1:3000", .remote, "127.0.0.1", 18081, "127.0.0.1", 3000),
            ("[::1]:18081:127.0.0.1:3000", .remote, "::1", 18081, "127.0.0.1", 3000),
        ])
    func parses(text: String, direction: Forward.Direction, bind: String, port: Int, host: String, hostPort: Int) throws
    {
        let forward = try Forward.parse(text, direction: direction, defaultBind: "127.0.0.1")
        #expect(forward.listen == HostPort(host: bind, port: port))
        #expect(forward.target == HostPort(host: host, port: hostPort))
        #expect(forward.direction == direction)
        #expect(!forward.isOpenCode)
        // Its rendering parses back to itself.
        let written = String(forward.description.dropFirst(3))
        #expect(try Forward.parse(written, direction: direction, defaultBind: "x") == forward, "\(forward)")
    }

    @Test(
        "not a forward: one line each",
        arguments: [
            ("3000", Forward.Direction.local), ("3000:host", .local), ("a:b:c:d:e", .local),
            ("x:127.0.0.1:3000", .local),
            ("3000:127.0.0.1:0", .local), ("0:127.0.0.1:3000", .remote), ("70000:127.0.0.1:3000", .local),
            ("3000::3000", .local), ("[::1:3000:h:1", .local), ("3000:h;rm -rf /:1", .local), (":3000:h:1", .local),
        ])
    func refuses(text: String, direction: Forward.Direction) {
        #expect(throws: TargetParseError.self, "\(text)") {
            try Forward.parse(text, direction: direction, defaultBind: "127.0.0.1")
        }
    }

    @Test("a port given twice, a local port equal to another forward's, a LAN address without --allow-lan")
    func validatesTogether() throws {
        let opencode = Forward(
            direction: .local, listen: HostPort(host: "127.0.0.1", port: 4096),
            target: HostPort(host: "127.0.0.1", port: 18080), isOpenCode: true)
        let app = try Forward.parse("3000:127.0.0.1:18081", direction: .local, defaultBind: "127.0.0.1")
        try Forward.validate([opencode, app], allowLAN: false)
        // The same port on the other end is another port.
        try Forward.validate(
            [opencode, try Forward.parse("4096:127.0.0.1:4096", direction: .remote, defaultBind: "127.0.0.1")],
            allowLAN: false)
        let twice = try Forward.parse("[::1]:4096:127.0.0.1:18081", direction: .local, defaultBind: "127.0.0.1")
        #expect(throws: TargetParseError.self) { try Forward.validate([opencode, app, twice], allowLAN: false) }
        let lan = try Forward.parse("0.0.0.0:3000:127.0.0.1:18081", direction: .local, defaultBind: "127.0.0.1")
        #expect(throws: TargetParseError.self) { try Forward.validate([opencode, lan], allowLAN: false) }
        try Forward.validate([opencode, lan], allowLAN: true)
        // Port 0 (a free one picked) twice is two ports.
        let free = try Forward.parse("0:127.0.0.1:1", direction: .local, defaultBind: "127.0.0.1")
        try Forward.validate([free, free], allowLAN: false)
    }
}
