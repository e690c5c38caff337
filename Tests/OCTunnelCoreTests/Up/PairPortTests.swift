@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Where `tunnel up` listens for OpenCode 2's pair links: OpenCode's own ports by itself, the
/// user's `--pair-port N` whatever the far side says, never what `/api/info` alone names.
@Suite("the pair port: OpenCode's choice or the user's, never the far side's", .ownThreads)
struct PairPortTests {
    static func report(_ port: Int?, generation: OpenCodeGeneration = .two) -> HealthReport {
        HealthReport(
            version: "2.0.21", generation: generation, healthPath: "/api/info", eventsPath: "/api/event",
            healthMilliseconds: 1,
            eventsMilliseconds: 1, serverPort: port)
    }

    @Test(
        "automatic: OpenCode 2's service ports (49374, 49375) and serve's 4096 are listened on; 80, 5432, 1023 or 65535 named in /api/info are not"
    )
    func automatic() {
        for port in [49374, 49375, 4096] {
            #expect(PairPort.plan(for: Self.report(port), localPort: 4097, choice: .automatic) == .listen(port: port))
        }
        for port in [80, 443, 5432, 1023, 22, 65535, 49376] {
            #expect(
                PairPort.plan(for: Self.report(port), localPort: 4096, choice: .automatic) == .notOpenCodes(port: port))
        }
        #expect(
            PairPort.plan(for: Self.report(nil), localPort: 4096, choice: .automatic) == .listen(port: 49374),
            "no /api/info read: the service's default")
        #expect(
            PairPort.plan(for: Self.report(4096), localPort: 4096, choice: .automatic) == nil, "the local port already")
        #expect(
            PairPort.plan(for: Self.report(49374, generation: .one), localPort: 4096, choice: .automatic) == nil,
            "1.x has no pair links")
    }

    @Test("--pair-port N wins over what the far side names; --no-pair-port says the port and listens on none")
    func chosen() {
        #expect(PairPort.plan(for: Self.report(5432), localPort: 4096, choice: .port(49380)) == .listen(port: 49380))
        #expect(PairPort.plan(for: Self.report(49374), localPort: 4096, choice: .off) == .off(port: 49374))
        #expect(PairPort.plan(for: Self.report(80), localPort: 4096, choice: .port(4096)) == nil)
    }

    @Test("--pair-port takes auto or 1024-65535, one sentence otherwise")
    func parsing() throws {
        #expect(try PairPortChoice.parse("auto") == .automatic)
        #expect(try PairPortChoice.parse("49374") == .port(49374))
        #expect(try PairPortChoice.parse("1024") == .port(1024))
        for text in ["80", "1023", "0", "65536", "-1", "x", "", "４９３７４"] {
            #expect(throws: TargetParseError.self, "\(text)") { try PairPortChoice.parse(text) }
        }
        #expect { try PairPortChoice.parse("80") } throws: {
            ($0 as? TargetParseError)?.message == "--pair-port 80 is below 1024: give a port of 1024-65535"
        }
    }
}
