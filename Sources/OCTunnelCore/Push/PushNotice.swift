import Foundation

/// What a moment's push says and which buttons it carries, as `--push-detail` allows: the one
/// place a push's words are chosen.
public struct PushNotice: Sendable {
    public let detail: PushDetail

    public init(detail: PushDetail) { self.detail = detail }

    /// The answers `moment`'s push offers as buttons, in order: a permission's three replies; a
    /// single-choice question's options (and Dismiss while there is room) where it offers them
    /// and the detail is full (brief shows no label the agent wrote); none for a merged notice.
    public func answers(for moment: AgentMoment) -> [PushAnswer] {
        guard moment.merged == nil else { return [] }
        if let question = moment.question {
            guard detail == .full, question.offersActions else { return [] }
            let options = question.labels.map { PushAnswer.question(.answer($0)) }
            return Array((options + [.question(.dismiss)]).prefix(NtfyMessage.actionLimit))
        }
        guard moment.kind == .permission, moment.permissionID?.isEmpty == false else { return [] }
        return PermissionReply.allCases.map { .permission($0) }
    }

    /// The request id the buttons answer: the question's, else the permission's.
    public func requestID(of moment: AgentMoment) -> String? {
        moment.question?.id ?? moment.permissionID
    }

    /// A button's label for `answer`.
    public func label(_ answer: PushAnswer, secrets: [String]) -> String {
        switch answer {
        case .permission(.once): "Allow once"
        case .permission(.always): "Allow always"
        case .permission(.reject): "Reject"
        case .question(.dismiss): "Dismiss"
        case .question(.answer(let label)): OutsideText.shown(label, secrets: secrets, limit: 40)
        }
    }

    /// The push's title and text.
    public func words(for moment: AgentMoment) -> (title: String, message: String) {
        guard detail == .full else {
            let title =
                switch moment.kind {
                case .finished: "OpenCode finished"
                case .failed: "OpenCode failed"
                case .permission: moment.question == nil ? "OpenCode asks for permission" : "OpenCode asks a question"
                }
            let count = moment.merged.map { " (+\($0.count) more)" } ?? ""
            return (
                title + count, moment.kind == .permission ? "It waits for your answer." : "Open OpenCode to see it."
            )
        }
        let headline = moment.question == nil ? moment.headline : "OpenCode asks a question: \(moment.sessionName)"
        return (headline, moment.message)
    }

    /// ntfy's priority (4: high, for what waits on the user) and tags (shown as emoji).
    public func look(for moment: AgentMoment) -> (priority: Int, tags: [String]) {
        switch moment.kind {
        case .permission: (4, [moment.question == nil ? "lock" : "question"])
        case .failed: (4, ["x"])
        case .finished: (3, ["white_check_mark"])
        }
    }

    /// The follow-up push's words when request `requestID` was answered somewhere else.
    public func answeredElsewhere(_ moment: AgentMoment?) -> (title: String, message: String) {
        let what = moment?.question == nil ? "permission" : "question"
        guard detail == .full, let moment else {
            return ("OpenCode: answered elsewhere", "A \(what) was answered elsewhere; its buttons do nothing now.")
        }
        return (
            "OpenCode: answered elsewhere",
            "The \(what) in \(moment.sessionName) was answered elsewhere; its buttons do nothing now."
        )
    }
}
