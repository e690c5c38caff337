import Foundation

/// What octunnel answers a question with: one of its options' labels, or a dismissal (OpenCode's
/// "reject": the agent is told the user dismissed the question).
public enum QuestionReply: Sendable, Equatable {
    case answer(String)
    case dismiss

    /// "answered "Postgres"", "dismissed": what was done, the label shown safe.
    public var done: String {
        switch self {
        case .answer(let label): "answered \"\(OutsideText.shown(label, limit: 80))\""
        case .dismiss: "dismissed"
        }
    }
}

/// One way to send a question's reply: the route and body of one OpenCode generation.
///
/// 1.x: `POST /question/:requestID/reply` `{"answers": [[label, …], …]}` (one array of chosen
/// labels per question, in order) → 200 `true`, and `POST /question/:requestID/reject` (no body)
/// → 200 `true`; both answer `true` for a request that is not pending too (Question.reply and
/// reject return quietly), so only the list says "gone" (packages/opencode/src/server/routes/
/// question.ts, packages/opencode/src/question/index.ts). 2.x: `POST /api/session/:sessionID/
/// question/:requestID/reply` (the same `{"answers"}`, `Question.Reply`) and `…/reject` (no
/// payload) → 204; a request not pending, or of another session, → 404
/// `{"_tag":"QuestionNotFoundError","requestID","message"}` (packages/protocol/src/groups/
/// question.ts, packages/server/src/handlers/question.ts, packages/schema/src/question.ts).
public enum QuestionReplyRoute: Sendable, Equatable {
    case one, two

    public init(_ generation: OpenCodeGeneration) { self = generation == .one ? .one : .two }

    /// The request line's path for `request`'s `reply` (its ids are route-safe: `AskedQuestion`).
    public func path(for request: AskedQuestion, _ reply: QuestionReply) -> String {
        let verb = reply == .dismiss ? "reject" : "reply"
        switch self {
        case .one: return "/question/\(request.id)/\(verb)"
        case .two: return "/api/session/\(request.sessionID)/question/\(request.id)/\(verb)"
        }
    }

    /// The JSON body: `{"answers":[[label]]}` for an answer (the one question's one choice), none to dismiss.
    public func body(_ reply: QuestionReply) -> [UInt8] {
        guard case .answer(let label) = reply,
              let data = try? JSONSerialization.data(withJSONObject: ["answers": [[label]]], options: [.withoutEscapingSlashes]) else { return [] }
        return Array(data)
    }

    /// What OpenCode's answer on this route means: as a permission's reply route of the same
    /// generation answers (`PermissionReplyRoute.judge`: 200 `true` or 204 taken, a tagged 404
    /// gone, an empty 404 or 1.x's web app a missing route, 401 refused).
    public func judge(status: Int, contentType: String?, body: [UInt8]) -> PermissionReplyOutcome {
        (self == .one ? PermissionReplyRoute.one : .two).judge(status: status, contentType: contentType, body: body)
    }
}
