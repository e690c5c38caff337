/// What one button of a push answers: a permission's reply or a question's.
public enum PushAnswer: Sendable, Equatable, Hashable {
    case permission(PermissionReply)
    case question(QuestionReply)

    /// "allowed once", "answered "Postgres"": what was done.
    public var done: String {
        switch self {
        case .permission(let reply): reply.done
        case .question(let reply): reply.done
        }
    }
}

extension QuestionReply: Hashable {
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .answer(let label):
            hasher.combine(0)
            hasher.combine(label)
        case .dismiss: hasher.combine(1)
        }
    }
}

/// Sends the answer a button's tap carried: for a permission, the same path as `octunnel
/// permission allow|always|reject` (`PermissionClient.answer`: only to a request OpenCode still
/// lists, never retried); for a question, `PermissionClient.answerQuestion`. Arguments: OpenCode's
/// request id, the project directory it was asked in (nil: OpenCode's own), the answer.
public typealias PushAnswerer =
    @Sendable (_ requestID: String, _ directory: String?, _ answer: PushAnswer) throws -> Void
