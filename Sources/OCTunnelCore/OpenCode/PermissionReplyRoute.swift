import Foundation

/// The three answers OpenCode takes for a permission (`once`, `always`, `reject` in both
/// generations), and what octunnel's commands call them.
public enum PermissionReply: String, Sendable, CaseIterable {
    case once, always, reject

    /// `permission allow|always|reject`: the command's word for each.
    public init?(command: String) {
        switch command {
        case "allow", "once": self = .once
        case "always": self = .always
        case "reject", "deny": self = .reject
        default: return nil
        }
    }

    /// "allowed once", "allowed always", "rejected": what the command says it did.
    public var done: String {
        switch self {
        case .once: "allowed once"
        case .always: "allowed always"
        case .reject: "rejected"
        }
    }
}

/// One way to send a permission's reply: the route and body of one OpenCode version.
///
/// 1.x: `POST /permission/:requestID/reply` `{"reply"}` → `true` (packages/opencode/src/server/
/// instance/permission.ts); before it, `POST /session/:sessionID/permissions/:permissionID`
/// `{"response"}` → `true` (routes/session.ts, deprecated). 2.x: `POST /api/session/:sessionID/
/// permission/:requestID/reply` `{"reply"}` → 204 (packages/protocol/src/groups/permission.ts).
/// Each generation lists its own (`OpenCodeDialect.permissionReplyRoutes`).
public struct PermissionReplyRoute: Sendable, Equatable, CustomStringConvertible {
    /// A name for messages and equality ("1.x", "1.x session", "2.x").
    public let name: String
    /// The generation that serves it: what a 401 or 404 on it means.
    public let generation: OpenCodeGeneration
    /// The body's one key: `reply`, or `response` on 1.x's older route.
    public let replyKey: String
    private let route: @Sendable (PendingPermission) -> String

    /// A route of `generation`: `route` makes the path from a request whose ids are route-safe.
    public init(
        name: String, generation: OpenCodeGeneration, replyKey: String = "reply",
        route: @escaping @Sendable (PendingPermission) -> String
    ) {
        (self.name, self.generation, self.replyKey, self.route) = (name, generation, replyKey, route)
    }

    /// 1.x's `POST /permission/:requestID/reply`.
    public static let one = PermissionReplyRoute(name: "1.x", generation: .one) { "/permission/\($0.id)/reply" }
    /// 1.x's older `POST /session/:sessionID/permissions/:permissionID` `{"response"}`.
    public static let oneSession = PermissionReplyRoute(name: "1.x session", generation: .one, replyKey: "response") {
        "/session/\($0.sessionID)/permissions/\($0.id)"
    }
    /// 2.x's `POST /api/session/:sessionID/permission/:requestID/reply`.
    public static let two = PermissionReplyRoute(name: "2.x", generation: .two) {
        "/api/session/\($0.sessionID)/permission/\($0.id)/reply"
    }
    /// Every route of the generations octunnel knows.
    public static var allCases: [PermissionReplyRoute] { OpenCodeGeneration.known.flatMap(\.api.permissionReplyRoutes) }

    /// The routes to try for `generation`, in order: 1.x's older one only when the newer is missing.
    public static func routes(for generation: OpenCodeGeneration) -> [PermissionReplyRoute] {
        generation.api.permissionReplyRoutes
    }

    public var description: String { name }

    public static func == (lhs: PermissionReplyRoute, rhs: PermissionReplyRoute) -> Bool {
        lhs.name == rhs.name && lhs.generation == rhs.generation && lhs.replyKey == rhs.replyKey
    }

    /// The request line's path for `request` (its ids are route-safe: `PendingPermission.isRouteSafe`).
    public func path(for request: PendingPermission) -> String { route(request) }

    /// The JSON body: `{"reply":…}`, or `{"response":…}` on 1.x's older route.
    public func body(_ reply: PermissionReply) -> [UInt8] {
        Array("{\"\(replyKey)\":\"\(reply.rawValue)\"}".utf8)
    }

    /// What OpenCode's answer on this route means.
    public func judge(status: Int, contentType: String?, body: [UInt8]) -> PermissionReplyOutcome {
        Self.judge(status: status, contentType: contentType, body: body, generation: generation)
    }

    /// What an answer of `generation`'s reply routes means: 200 `true` or 204 taken, a tagged 404
    /// gone, another 404 as the generation says, 1.x's web app a missing route, 401 refused.
    static func judge(
        status: Int, contentType: String?, body: [UInt8], generation: OpenCodeGeneration
    ) -> PermissionReplyOutcome {
        let tag = TaggedErrorWire.tag(of: body)
        switch status {
        case 200 where decodeWire(Bool.self, Array(body.prefix(65536))) == true, 204:
            return .answered
        case 401:
            return .refused(generation: OpenCodeGeneration.naming(refusal: body) ?? generation)
        case 404
        where tag.map(["PermissionNotFoundError", "QuestionNotFoundError", "SessionNotFoundError"].contains) == true:
            return .gone
        case 404:
            return generation.api.replyNotFound(body: body)
        case 200 where OpenCodeAnswer.looksLikeHTML(body) || contentType?.lowercased().contains("text/html") == true:
            // 1.x's catch-all serves the web app for a route it does not have.
            return .routeMissing
        default:
            return .failed(status: status, body: body)
        }
    }
}

/// What a reply came to.
public enum PermissionReplyOutcome: Sendable, Equatable {
    /// OpenCode took it.
    case answered
    /// OpenCode has no such request any more: answered elsewhere, or OpenCode restarted.
    case gone
    /// This OpenCode has no such route (an older or newer version): try the next one.
    case routeMissing
    /// The password was refused.
    case refused(generation: OpenCodeGeneration)
    /// Any other answer, kept to quote (redacted) in the error.
    case failed(status: Int, body: [UInt8])
}
