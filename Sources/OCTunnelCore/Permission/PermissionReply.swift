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

/// One way to send a reply: the route and body of one OpenCode version.
///
/// 1.x: `POST /permission/:requestID/reply` `{"reply"}` → `true` (packages/opencode/src/server/
/// instance/permission.ts); before it, `POST /session/:sessionID/permissions/:permissionID`
/// `{"response"}` → `true` (routes/session.ts, deprecated). 2.x: `POST /api/session/:sessionID/
/// permission/:requestID/reply` `{"reply"}` → 204 (packages/protocol/src/groups/permission.ts).
public enum PermissionReplyRoute: Sendable, Equatable, CaseIterable {
    case one, oneSession, two

    /// The routes to try for `generation`, in order: 1.x's older one only when the newer is missing.
    public static func routes(for generation: OpenCodeGeneration) -> [PermissionReplyRoute] {
        generation == .one ? [.one, .oneSession] : [.two]
    }

    /// The request line's path for `request` (its ids are route-safe: `PendingPermission.isRouteSafe`).
    public func path(for request: PendingPermission) -> String {
        switch self {
        case .one: "/permission/\(request.id)/reply"
        case .oneSession: "/session/\(request.sessionID)/permissions/\(request.id)"
        case .two: "/api/session/\(request.sessionID)/permission/\(request.id)/reply"
        }
    }

    /// The JSON body: `{"reply":…}`, or `{"response":…}` on 1.x's older route.
    public func body(_ reply: PermissionReply) -> [UInt8] {
        Array("{\"\(self == .oneSession ? "response" : "reply")\":\"\(reply.rawValue)\"}".utf8)
    }

    /// What OpenCode's answer on this route means.
    public func judge(status: Int, contentType: String?, body: [UInt8]) -> PermissionReplyOutcome {
        let json = try? JSONSerialization.jsonObject(with: Data(body.prefix(65536)), options: [.fragmentsAllowed])
        let tag = (json as? [String: Any])?["_tag"] as? String
        switch status {
        case 200 where json as? Bool == true, 204:
            return .answered
        case 401:
            return .refused(generation: tag == "UnauthorizedError" || self == .two ? .two : .one)
        case 404 where tag.map(["PermissionNotFoundError", "QuestionNotFoundError", "SessionNotFoundError"].contains) == true:
            return .gone
        case 404 where self == .two:
            // 2.x's router answers an unknown route with an empty 404; its reply route exists in every 2.x.
            return body.isEmpty ? .routeMissing : .gone
        case 404:
            return .routeMissing
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
