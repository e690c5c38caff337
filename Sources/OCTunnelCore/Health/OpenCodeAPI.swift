import Foundation

/// The HTTP API generations OpenCode has shipped; each has its own health route and event stream.
public enum OpenCodeGeneration: Int, Sendable, Equatable, CaseIterable {
    /// OpenCode 1.x (`packages/opencode`, Hono): `/global/health`, `/global/event`, `/event`.
    case one = 1
    /// OpenCode 2.x (`packages/protocol` + `packages/server`, Effect HttpApi): `/api/...`.
    case two = 2

    /// "API 1", "API 2": how reports name it.
    public var label: String { "API \(rawValue)" }

    /// The event streams to try, in order, for this generation: 1.x serves the global stream
    /// (`{"payload":{"type":…}}`) and the per-directory one (`{"type":…}`); 2.x serves `/api/event`.
    public var eventPaths: [String] {
        switch self {
        case .one: return ["/global/event", "/event"]
        case .two: return ["/api/event"]
        }
    }
}

/// What one HTTP answer to a health route says about the server behind the tunnel.
///
/// Every answer of the health test is judged here, in `classify`, and nowhere else: a new kind
/// of answer (for example a home-side gateway's own error) is one more case and one more rule.
public enum OpenCodeAnswer: Equatable, Sendable {
    /// OpenCode, this version, this generation.
    case openCode(version: String, generation: OpenCodeGeneration)
    /// OpenCode's router does not know this route (an empty or JSON 404): another version; try the next route.
    case routeMissing
    /// A web page (HTML): OpenCode 2's web app answers paths its API does not know, 1.x's catch-all
    /// proxies its web app too, and so does any web server. Not conclusive alone; try the next route.
    case webPage
    /// HTTP 401: the server wants a password. The generation is the one the route or the body names.
    case needsPassword(generation: OpenCodeGeneration?)
    /// An answer OpenCode never gives on this route: something else listens there.
    case foreign(detail: String)
    /// `home up`'s own 502: the home machine is reachable but OpenCode is not running there.
    case homeGateway(HomeGatewayAnswer)

    /// The health routes, in the order they are tried, and the generation each belongs to:
    /// 1.x's `/global/health`; 2.x's `/api/info` (current 2.0.x), `/api/status` (documented for
    /// 2.0.x, 404 on 2.0.3) and `/api/health` (2.0.3 and the 2.0 betas).
    public static let healthRoutes: [(path: String, generation: OpenCodeGeneration)] = [
        ("/global/health", .one), ("/api/info", .two), ("/api/status", .two), ("/api/health", .two),
    ]

    /// The port of the server's own loopback address in 2.x's `/api/info` (`urls`, as
    /// packages/server/src/server-info.ts builds them: the bound address, or every interface's
    /// for a wildcard bind), else of its first URL; nil when the body names none.
    public static func serverPort(info body: [UInt8]) -> Int? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let urls = object["urls"] as? [String] else { return nil }
        let parsed = urls.prefix(32).compactMap { URLComponents(string: $0) }.filter { ($0.port ?? 0) > 0 && ($0.port ?? 0) <= 65535 }
        let loopback = parsed.first { ["127.0.0.1", "localhost", "[::1]", "::1"].contains($0.host ?? "") }
        return (loopback ?? parsed.first)?.port
    }

    /// Judges `status`, `contentType` and `body` received from `path`; a body quoted in the
    /// answer has `secrets` (what the request sent: a server may echo them) redacted.
    public static func classify(path: String, status: Int, contentType: String?, body: [UInt8], secrets: [String] = []) -> OpenCodeAnswer {
        let generation = healthRoutes.first { $0.path == path }?.generation
        let type = contentType?.lowercased() ?? ""
        let json = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        let object = json as? [String: Any]
        let isHTML = type.contains("text/html") || looksLikeHTML(body)
        if let gateway = HomeGatewayAnswer.parse(status: status, body: body) { return .homeGateway(gateway) }
        switch status {
        case 200:
            if let object, let version = object["version"] as? String, !version.isEmpty, let generation {
                switch path {
                case "/global/health", "/api/health":
                    if object["healthy"] as? Bool == true { return .openCode(version: version, generation: generation) }
                case "/api/info", "/api/status":
                    if object["pid"] is NSNumber { return .openCode(version: version, generation: generation) }
                default: break
                }
            }
            if isHTML { return .webPage }
            return .foreign(detail: "HTTP 200 from \(path) with \(preview(body, secrets: secrets))")
        case 401:
            // 2.x's API answers {"_tag":"UnauthorizedError",…} (packages/server/src/middleware/
            // authorization.ts); 1.x's basic auth answers "Unauthorized" (Hono) or nothing (its
            // Effect server). Only a body naming itself says 2.x: 1.x guards /api/… paths too.
            if object?["_tag"] as? String == "UnauthorizedError" { return .needsPassword(generation: .two) }
            return .needsPassword(generation: generation == .one ? .one : nil)
        case 404:
            if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) || json != nil { return .routeMissing }
            if isHTML { return .webPage }
            return .foreign(detail: "HTTP 404 from \(path): \(preview(body, secrets: secrets))")
        default:
            return .foreign(detail: "HTTP \(status) from \(path)\(body.isEmpty ? "" : ": \(preview(body, secrets: secrets))")")
        }
    }

    /// Which OpenCode refused, from every 401 the health routes got: one naming itself
    /// (`{"_tag":"UnauthorizedError",…}`: 2.x's API, on any route) is 2.x; else a refused
    /// `/global/health` is 1.x (2.x would have named itself on `/api/info`). An unnamed 401 body
    /// never decides: 1.x's Hono server says "Unauthorized", its Effect server and a guarded
    /// 2.x web app send nothing.
    static func refusingGeneration(_ refusals: [(path: String, answer: OpenCodeAnswer)]) -> OpenCodeGeneration? {
        if refusals.contains(where: { $0.answer == .needsPassword(generation: .two) }) { return .two }
        if refusals.contains(where: { $0.path == "/global/health" }) { return .one }
        return nil
    }

    /// Whether `data`, one event's data, is `server.connected` in either shape: 1.x's global
    /// `{"payload":{"type":…}}`, or the bare `{"type":…}` of 1.x's `/event` and 2.x's `/api/event`.
    public static func isServerConnected(_ data: String) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { return false }
        if object["type"] as? String == "server.connected" { return true }
        return (object["payload"] as? [String: Any])?["type"] as? String == "server.connected"
    }

    static func looksLikeHTML(_ body: [UInt8]) -> Bool {
        let start = String(decoding: body.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return start.hasPrefix("<!doctype html") || start.hasPrefix("<html")
    }

    /// The first 80 characters of a body, printable ASCII only, quoted; `secrets` are redacted
    /// from the whole body first (`OutsideText.redacting` says why the order matters).
    static func preview(_ body: [UInt8], secrets: [String] = []) -> String {
        let text = OutsideText.redacting(String(decoding: body, as: UTF8.self), secrets: secrets).unicodeScalars
        let clean = String(text.prefix(80).map { $0.value >= 0x20 && $0.value < 0x7f ? Character($0) : " " })
        return "\"\(clean.trimmingCharacters(in: .whitespaces))\(text.count > 80 ? "…" : "")\""
    }
}
