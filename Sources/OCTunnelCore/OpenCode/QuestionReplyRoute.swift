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

    /// The last word of its route: `reply`, or `reject` to dismiss.
    public var verb: String { self == .dismiss ? "reject" : "reply" }
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
public struct QuestionReplyRoute: Sendable, Equatable {
    /// The generation whose route it is.
    public let generation: OpenCodeGeneration

    public init(_ generation: OpenCodeGeneration) { self.generation = generation }

    /// 1.x's `/question/:requestID/reply|reject`.
    public static let one = QuestionReplyRoute(.one)
    /// 2.x's `/api/session/:sessionID/question/:requestID/reply|reject`.
    public static let two = QuestionReplyRoute(.two)

    /// The request line's path for `request`'s `reply` (its ids are route-safe: `AskedQuestion`).
    public func path(for request: AskedQuestion, _ reply: QuestionReply) -> String {
        generation.api.questionReplyPath(request, reply)
    }

    /// The JSON body: `{"answers":[[label]]}` for an answer (the one question's one choice), none to dismiss.
    public func body(_ reply: QuestionReply) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard case .answer(let label) = reply, let data = try? encoder.encode(Answers(answers: [[label]])) else {
            return []
        }
        return Array(data)
    }

    /// `{"answers": [[label, …], …]}`: one array of chosen labels per question, in order.
    private struct Answers: Encodable { let answers: [[String]] }

    /// What OpenCode's answer on this route means: as a permission's reply route of the same
    /// generation answers (`PermissionReplyRoute.judge`: 200 `true` or 204 taken, a tagged 404
    /// gone, an empty 404 or 1.x's web app a missing route, 401 refused).
    public func judge(status: Int, contentType: String?, body: [UInt8]) -> PermissionReplyOutcome {
        PermissionReplyRoute.judge(status: status, contentType: contentType, body: body, generation: generation)
    }
}
