import Foundation

/// The answer `home up` gives a forwarded connection it cannot carry to OpenCode: libssh2 has
/// already confirmed the channel (packet.c:194-224), so "connect failed" cannot be said in SSH;
/// an HTTP 502 with a JSON body naming the layer and the fix is the only way across. The
/// laptop's health test recognises it (`parse`) and says OpenCode is not running at home,
/// distinct from "nothing listens behind the VPS".
public struct HomeGatewayAnswer: Equatable, Sendable {
    /// Where OpenCode should listen on the home machine.
    public let home: HostPort
    /// What went wrong there, e.g. "nothing listens on 127.0.0.1:4096 on the home machine".
    public let error: String
    /// What to do about it.
    public let fix: String

    /// The answer for a home port that refused, timed out or failed with `reason`: OpenCode's,
    /// or (`openCode` false) another forward's, the app the agent builds.
    public static func unreachable(home: HostPort, reason: String, openCode: Bool = true) -> HomeGatewayAnswer {
        let what =
            reason == "connection refused"
            ? "nothing listens on \(home) on the home machine"
            : "cannot reach \(home) on the home machine (\(reason))"
        let fix =
            openCode ? "start `opencode serve --port \(home.port)` there" : "start the app there, listening on \(home)"
        return HomeGatewayAnswer(home: home, error: what, fix: fix)
    }

    /// The JSON body: `{"octunnel":"home","error":…,"fix":…,"home":"127.0.0.1:4096"}`.
    public var body: [UInt8] {
        let object: [String: Any] = ["octunnel": "home", "error": error, "fix": fix, "home": home.description]
        return Array(JSONText.line(object).utf8)
    }

    /// The whole HTTP/1.1 response, `Connection: close`.
    public var response: [UInt8] {
        let body = self.body
        let head =
            "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            + "Connection: close\r\nX-Octunnel: home\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// Recognises a 502 whose JSON body says `"octunnel":"home"`; nil for anything else.
    public static func parse(status: Int, body: [UInt8]) -> HomeGatewayAnswer? {
        guard status == 502, let wire = decodeWire(Wire.self, body), wire.octunnel == "home" else { return nil }
        // The address is shown to the user as it is: one that would not print as itself (a
        // zero-width or bidirectional character in the host) is not taken, as if it were missing.
        let home =
            wire.home.flatMap { try? HostPort.parse($0) }
            .flatMap { OutsideText.shown($0.description) == $0.description ? $0 : nil }
            ?? HostPort(host: Defaults.homeHost, port: Defaults.homePort)
        return HomeGatewayAnswer(
            home: home, error: wire.error ?? "OpenCode is not reachable on the home machine",
            fix: wire.fix ?? "start `opencode serve --port \(home.port)` there")
    }
}

extension HomeGatewayAnswer {
    /// The 502's body as `parse` reads it: every field optional, one of another type as if absent.
    private struct Wire: Decodable {
        @LenientField var octunnel: String?
        @LenientField var error: String?
        @LenientField var fix: String?
        @LenientField var home: String?
    }
}
