import Foundation

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

    /// The health routes, in the order they are tried, and the generation each belongs to: each
    /// generation's own (`OpenCodeDialect.healthRoutes`), oldest generation first: 1.x's
    /// `/global/health`; 2.x's `/api/info` (current 2.0.x), `/api/status` (documented for 2.0.x,
    /// 404 on 2.0.3) and `/api/health` (2.0.3 and the 2.0 betas).
    public static func healthRoutes(
        of generations: [OpenCodeGeneration]
    ) -> [(path: String, generation: OpenCodeGeneration)] {
        generations.flatMap { generation in generation.api.healthRoutes.map { ($0, generation) } }
    }

    /// `healthRoutes(of:)` the generations octunnel knows.
    public static var healthRoutes: [(path: String, generation: OpenCodeGeneration)] {
        healthRoutes(of: OpenCodeGeneration.known)
    }

    /// The port of the server's own address, as 2.x's `/api/info` names it (`OpenCodeTwo.serverPort`).
    public static func serverPort(info body: [UInt8]) -> Int? {
        OpenCodeGeneration.two.api.serverPort(health: "/api/info", body: body)
    }

    /// Judges `status`, `contentType` and `body` received from `path`; a body quoted in the
    /// answer has `secrets` (what the request sent: a server may echo them) redacted.
    public static func classify(
        path: String, status: Int, contentType: String?, body: [UInt8], secrets: [String] = [],
        generations: [OpenCodeGeneration] = OpenCodeGeneration.known
    ) -> OpenCodeAnswer {
        let generation = healthRoutes(of: generations).first { $0.path == path }?.generation
        let isHTML = (contentType?.lowercased() ?? "").contains("text/html") || looksLikeHTML(body)
        if let gateway = HomeGatewayAnswer.parse(status: status, body: body) { return .homeGateway(gateway) }
        switch status {
        case 200:
            if let generation, let version = generation.api.version(healthy: path, body: body) {
                return .openCode(version: version, generation: generation)
            }
            if isHTML { return .webPage }
            return .foreign(detail: "HTTP 200 from \(path) with \(preview(body, secrets: secrets))")
        case 401:
            // 2.x's API answers {"_tag":"UnauthorizedError",…} (packages/server/src/middleware/
            // authorization.ts); 1.x's basic auth answers "Unauthorized" (Hono) or nothing (its
            // Effect server). Only a body naming itself says 2.x: 1.x guards /api/… paths too.
            if let named = OpenCodeGeneration.naming(refusal: body, among: generations) {
                return .needsPassword(generation: named)
            }
            return .needsPassword(generation: generation.flatMap { $0.api.ownsUnnamedRefusals ? $0 : nil })
        case 404:
            if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) || isJSON(body) {
                return .routeMissing
            }
            if isHTML { return .webPage }
            return .foreign(detail: "HTTP 404 from \(path): \(preview(body, secrets: secrets))")
        default:
            return .foreign(
                detail: "HTTP \(status) from \(path)\(body.isEmpty ? "" : ": \(preview(body, secrets: secrets))")")
        }
    }

    /// Whether `body` is any JSON value (OpenCode's routers answer a missing route with JSON):
    /// the one place its content does not matter, so it is not decoded into a type.
    static func isJSON(_ body: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) != nil
    }

    /// Which OpenCode refused, from every 401 the health routes got: one naming itself
    /// (`{"_tag":"UnauthorizedError",…}`: 2.x's API, on any route) is 2.x; else a refused
    /// `/global/health` is 1.x (2.x would have named itself on `/api/info`). An unnamed 401 body
    /// never decides: 1.x's Hono server says "Unauthorized", its Effect server and a guarded
    /// 2.x web app send nothing.
    static func refusingGeneration(
        _ refusals: [(path: String, answer: OpenCodeAnswer)],
        generations: [OpenCodeGeneration] = OpenCodeGeneration.known
    ) -> OpenCodeGeneration? {
        for generation in generations
        where refusals.contains(where: { $0.answer == .needsPassword(generation: generation) }) {
            if !generation.api.ownsUnnamedRefusals { return generation }
        }
        let routes = healthRoutes(of: generations)
        for refusal in refusals {
            if let owner = routes.first(where: { $0.path == refusal.path })?.generation, owner.api.ownsUnnamedRefusals {
                return owner
            }
        }
        return nil
    }

    /// Whether `data`, one event's data, is `server.connected` in either shape: 1.x's global
    /// `{"payload":{"type":…}}`, or the bare `{"type":…}` of 1.x's `/event` and 2.x's `/api/event`.
    public static func isServerConnected(_ data: String) -> Bool {
        OpenCodeEvent(data: data)?.type == "server.connected"
    }

    static func looksLikeHTML(_ body: [UInt8]) -> Bool {
        let start = String(decoding: body.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            .lowercased()
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
