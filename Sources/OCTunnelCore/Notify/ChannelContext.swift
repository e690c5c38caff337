import Foundation

/// What the notifier lends its channels: the programs' environment (no `OPENCODE_*`), the
/// secrets to keep out of what they show, the process groups their programs run in (ended
/// whole at stop), the event sink (stderr and `--json`), and the one path by which a channel
/// answers OpenCode (`answer`), bounded: at most `Notifier.Limits.answering` channels wait for a
/// choice at once.
final class ChannelContext: @unchecked Sendable {
    /// This process's environment without `OPENCODE_*` (the password is there).
    let environment: [String: String]
    let secrets: [String]
    let groups: ChildGroups
    let emit: @Sendable (EngineEvent) -> Void
    /// Whether a reply can be sent for `moment`'s kind at all.
    let answerers: ChannelAnswerers
    private let lock = NSLock()
    private var waiting = 0
    private var stopped = false

    init(
        environment: [String: String], secrets: [String], groups: ChildGroups, answerers: ChannelAnswerers,
        emit: @escaping @Sendable (EngineEvent) -> Void
    ) {
        self.environment = environment.filter { !$0.key.hasPrefix("OPENCODE_") }
        (self.secrets, self.groups, self.answerers, self.emit) = (secrets, groups, answerers, emit)
    }

    /// Whether `moment` can be answered from a channel: a permission told alone that named its
    /// request, or a question told alone that offers actions, with an answerer for it.
    func answerable(_ moment: AgentMoment) -> Bool {
        guard moment.merged == nil else { return false }
        if moment.question?.offersActions == true { return answerers.question != nil }
        return answerers.permission != nil && moment.kind == .permission && moment.permissionID?.isEmpty == false
    }

    /// Takes one of the `limit` places for a channel waiting for a choice; false when all are
    /// taken or the notifier stopped (then the moment is shown without actions).
    func beginWaiting(limit: Int = Notifier.Limits.answering) -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard !stopped, waiting < limit else { return false }
        waiting += 1
        return true
    }

    /// Gives the place back; false once the notifier stopped (the choice is then not sent).
    func endWaiting() -> Bool {
        lock.lock(); defer { lock.unlock() }
        waiting -= 1
        return !stopped
    }

    var isStopped: Bool {
        lock.lock(); defer { lock.unlock() }
        return stopped
    }

    func stop() {
        lock.lock(); stopped = true; lock.unlock()
    }

    /// Sends the permission reply chosen on `moment`'s notification (only to a request OpenCode
    /// still lists, never retried) and says the outcome on stderr; the failure said, or nil.
    @discardableResult
    func answer(_ reply: PermissionReply, for moment: AgentMoment) -> String? {
        guard let sendReply = answerers.permission, let id = moment.permissionID else {
            return "nothing can answer it here"
        }
        do {
            try sendReply(id, moment.directory, reply)
            emit(.notice(NotificationAnswer.sentLine(reply, moment)))
            return nil
        } catch {
            return failed("the \(reply.rawValue) chosen on the notification was not sent", error)
        }
    }

    /// Sends the reply chosen on a question's notification (a label OpenCode listed for it, or a
    /// dismissal) and says the outcome; the failure said, or nil.
    @discardableResult
    func answer(_ reply: QuestionReply, to question: AskedQuestion, for moment: AgentMoment) -> String? {
        guard let sendReply = answerers.question else { return "nothing can answer it here" }
        do {
            try sendReply(question.id, moment.directory, reply)
            emit(.notice(QuestionNotificationAnswer.sentLine(reply, moment)))
            return nil
        } catch {
            return failed("the answer chosen on the notification was not sent", error)
        }
    }

    private func failed(_ what: String, _ error: any Error) -> String {
        let said = OutsideText.redacting(
            octunnelFailure(error)?.errorDescription ?? "the reply failed", secrets: secrets)
        emit(.warning("\(what): \(said)"))
        return said
    }
}
