import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("home up's 502 answer and listen refusals", .ownThreads)
struct HomeGatewayAnswerTests {
    @Test("the 502 home up sends is recognised by the laptop's classifier, with the home port and the fix")
    func roundTrip() throws {
        let home = HostPort(host: "127.0.0.1", port: 4096)
        let answer = HomeGatewayAnswer.unreachable(home: home, reason: "connection refused")
        #expect(answer.error == "nothing listens on 127.0.0.1:4096 on the home machine")
        #expect(answer.fix == "start `opencode serve --port 4096` there")
        let text = String(decoding: answer.response, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        let parts = text.components(separatedBy: "\r\n\r\n")
        #expect(parts.count == 2)
        #expect(parts[0].contains("Content-Length: \(parts[1].utf8.count)"))
        #expect(parts[1].contains(#""octunnel":"home""#))
        let classified = OpenCodeAnswer.classify(
            path: "/global/health", status: 502, contentType: "application/json", body: Array(parts[1].utf8))
        #expect(classified == .homeGateway(answer))
    }

    @Test("another 502, or a 502 without octunnel's marker, is not taken for the home side")
    func othersAreForeign() {
        let plain = OpenCodeAnswer.classify(
            path: "/global/health", status: 502, contentType: "text/html", body: Array("<html>Bad Gateway</html>".utf8))
        guard case .foreign = plain else { Issue.record("\(plain)"); return }
        let json = OpenCodeAnswer.classify(
            path: "/global/health", status: 502, contentType: "application/json", body: Array(#"{"error":"x"}"#.utf8))
        guard case .foreign = json else { Issue.record("\(json)"); return }
        #expect(
            HomeGatewayAnswer.parse(
                status: 200, body: HomeGatewayAnswer.unreachable(home: HostPort(host: "::1", port: 1), reason: "x").body
            ) == nil)
    }

    @Test("a home port that times out is described as unreachable, not as nothing listening")
    func timeout() {
        let answer = HomeGatewayAnswer.unreachable(
            home: HostPort(host: "::1", port: 4097), reason: "no answer within 10 s")
        #expect(answer.error == "cannot reach [::1]:4097 on the home machine (no answer within 10 s)")
        #expect(HomeGatewayAnswer.parse(status: 502, body: answer.body) == answer)
    }

    @Test(
        "sshd's policy debug messages are told apart from silence",
        arguments: [
            ("Server has disabled port forwarding.", true), ("port forwarding refused", true),
            ("Agent forwarding disabled.", false), ("Pty allocation disabled.", false),
        ])
    func policyMessages(message: String, isPolicy: Bool) {
        #expect(SSHSession.isForwardingPolicy(message) == isPolicy)
    }

    @Test("the listen line names the port, opens nothing and runs only the port-reclaim program")
    func listenLine() {
        let key = SSHPublicKey(ed25519: Array(repeating: 7, count: 32), comment: "home")
        let program = OctunnelKeyLine.forcedCommand(
            role: .home, ends: [HostPort(host: "127.0.0.1", port: 18080)], tag: OctunnelKeyLine.tag(for: key),
            added: OctunnelKeyLine.today())
        #expect(
            listenAuthorizedKeysLine(key, remotePort: 18080)
                == "restrict,port-forwarding,permitlisten=\"127.0.0.1:18080\",permitopen=\"127.0.0.1:1\",command=\"\(program)\" \(key.line)"
        )
        #expect(
            listenAuthorizedKeysLine(key, remoteHost: "::1", remotePort: 18081).hasPrefix(
                "restrict,port-forwarding,permitlisten=\"[::1]:18081\""))
    }
}
