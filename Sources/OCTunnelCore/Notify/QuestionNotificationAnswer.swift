import Foundation

/// Answering a question from its desktop notification (issue 48): a question told alone that asks
/// one single-choice question with at most `AskedQuestion.actionLimit` options shows one action
/// per option and "Dismiss" (OpenCode's reject); the one chosen is sent through the tunnel
/// (`PermissionClient.answerQuestion`, which sends only to a question OpenCode still lists, and
/// only a label it lists for it). Anything else is shown as text, answered in OpenCode.
///
/// The far side writes the labels, so they never name an action: the actions are `q0`, `q1`, …
/// (the option's index in the labels octunnel stored when it was told) and `dismiss`; a label is
/// only shown, cleaned (`OutsideText.shown`, with the secrets), inside the one `--action=NAME=Label`
/// argument, where no text of it can become an option of its own. The index chosen maps back to
/// the stored label, and only that label can be sent.
enum QuestionNotificationAnswer {
    /// The action name that dismisses the question.
    static let dismissAction = "dismiss"

    /// Whether `moment` gets actions: a question told alone whose request offers them.
    static func answerable(_ moment: AgentMoment) -> Bool {
        #if os(macOS)
            return false // osascript's notifications have no actions
        #else
            return moment.merged == nil
                && moment.question.map { $0.offersActions && ShownLabels.forms($0.labels) != nil } == true
        #endif
    }

    /// The `--action` and `--expire-time` options for `question`'s notification: `q<i>=<label shown>`
    /// per option (`ShownLabels`: none when two would look alike), then `dismiss=Dismiss`.
    static func arguments(_ question: AskedQuestion, secrets: [String]) -> [String] {
        (ShownLabels.forms(question.labels, secrets: secrets) ?? []).enumerated().map { index, shown in
            "--action=q\(index)=\(shown)"
        } + ["--action=\(dismissAction)=Dismiss", "--expire-time=\(Int(NotificationAnswer.wait * 1000))"]
    }

    /// The reply `notify-send` printed (the chosen action's name, alone on its last line), mapped
    /// back to `question`'s stored label; nil when the notification was closed, expired, the
    /// program stopped, or the name is none of its actions.
    static func chosen(_ stdout: String, _ question: AskedQuestion) -> QuestionReply? {
        guard let line = stdout.split(whereSeparator: \.isNewline).last?.trimmingCharacters(in: .whitespaces) else {
            return nil
        }
        if line == dismissAction { return .dismiss }
        guard line.hasPrefix("q"), line.utf8.count <= 3, let index = Int(line.dropFirst()),
            String(index) == line.dropFirst(),
            question.labels.indices.contains(index)
        else { return nil }
        return .answer(question.labels[index])
    }

    /// The line on stderr once a reply was sent.
    static func sentLine(_ reply: QuestionReply, _ moment: AgentMoment) -> String {
        "question \(OutsideText.shown(moment.question?.id ?? "", limit: 128)) \(reply.done) from the notification: \(moment.sessionName)"
    }

    /// The follow-up notification's headline when a reply could not be sent.
    static func failedHeadline(_ moment: AgentMoment) -> String {
        "OpenCode's question was not answered: \(moment.sessionName)"
    }
}

/// Sends a question's reply chosen on a notification: `PermissionClient.answerQuestion` through
/// the tunnel's local port, for the question `id` of the project `directory` (nil: OpenCode's own).
typealias QuestionAnswerer = @Sendable (_ id: String, _ directory: String?, _ reply: QuestionReply) throws -> Void
