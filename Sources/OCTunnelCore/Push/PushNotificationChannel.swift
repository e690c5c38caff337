import Foundation

/// The phone push as one of the notifier's channels (issue 54): each moment the notifier admits
/// becomes one ntfy message (`PushChannel.push`), its buttons answered by the reply listener that
/// lives as long as the channel (`start`/`stop`). A verified tap goes through the run's answerers
/// (`ChannelContext.answerers`, the path of `octunnel permission allow`: only a request OpenCode
/// still lists, never retried). A request answered anywhere else (the laptop, a terminal,
/// OpenCode's UI: OpenCode's `*.replied` event) gets a follow-up push and its buttons retired; one
/// the phone answered gets none.
///
/// A push that could not be sent (ntfy down, the network gone) is kept, at most `Limits.unsent` of
/// them (the oldest dropped first, said), and sent in order when the reply stream opens again
/// (tried every `Limits.retry` s at most while it is down) or before the next moment; one whose
/// request was answered meanwhile is dropped. A try whose answer was lost may have reached ntfy:
/// the next one looks for the push's own id on the topic first (`KeptPush`), so none is doubled.
final class PushNotificationChannel: NotificationChannel, @unchecked Sendable {
    let name = "the phone push"
    let immediate = false
    let followsAnswers = true
    let settings: PushSettings
    private let token: String?
    private let state = Locked<State>(State())

    /// The channel's bounds.
    enum Limits {
        /// Moments kept while ntfy cannot be reached.
        static let unsent = 16
        /// Seconds between the reply stream's tries while ntfy is down: a moment kept is pushed
        /// at most this long after ntfy is back.
        static let retry = 3.0
        /// Seconds `tunnel up` leaves `home up` (nearer OpenCode) to push a request first.
        static let yield = 1.5
    }

    private struct State {
        var channel: PushChannel?
        var listener: ReplyListener?
        /// Requests the phone answered (their `*.replied` event is not "elsewhere").
        var answeredHere = BoundedSet<String>(capacity: 1024)
        /// The last failure said (said again only when it changes).
        var lastSaid = ""
        /// What could not be pushed yet, oldest first.
        var unsent: [KeptPush] = []
        /// True while one thread sends the kept moments (the others add to them).
        var flushing = false
    }

    /// Whether a request's push first waits `Limits.yield` s and is dropped when the other end pushed it.
    private let yields: Bool

    /// A push through `run`'s settings, with the ntfy access token read from its file (or none).
    init(_ run: PushRun) {
        (settings, token, yields) = (run.settings, run.token, run.yields)
    }

    /// Makes the push with the notifier's secrets and starts listening for the buttons' taps.
    func start(_ context: ChannelContext) {
        let channel = PushChannel(settings: settings, token: token, secrets: context.secrets)
        let listener = channel.listener(
            answer: { [weak self] id, directory, answer in
                try self?.send(answer, to: id, directory: directory, context: context)
            },
            report: { context.emit(.notice($0)) })
        listener.maxBackoff = Limits.retry
        listener.opened = { [weak self] in self?.flush(context: context) }
        state.update { ($0.channel, $0.listener) = (channel, listener) }
        listener.start()
    }

    func deliver(_ moment: AgentMoment, context: ChannelContext) {
        var dropped = 0
        state.update { state in
            state.unsent.append(KeptPush(moment))
            dropped = max(0, state.unsent.count - Limits.unsent)
            state.unsent.removeFirst(dropped)
        }
        if dropped > 0 { context.emit(.warning("push: ntfy could not be reached: \(dropped) older moment(s) dropped")) }
        flush(context: context)
    }

    /// Sends the kept moments in order, stopping at the first that fails (kept for the next try;
    /// one that never will go, dropped); one thread at a time (a moment told meanwhile is sent by
    /// the thread that sends).
    private func flush(context: ChannelContext) {
        var mine = false
        state.update { state in
            mine = !state.flushing && state.channel != nil
            if mine { state.flushing = true }
        }
        guard mine, let channel = state.value.channel else { return }
        while true {
            // The next one, or the end of this turn: decided under the lock with `flushing`, so a
            // moment added as the list empties is never left for no one.
            var next: KeptPush?
            state.update { state in
                next = context.isStopped ? nil : state.unsent.first
                if next == nil { state.flushing = false }
            }
            guard var next else { return }
            if yields, pushedByOtherEnd(next.moment, channel: channel, context: context) {
                state.update { state in if state.unsent.first?.id == next.id { state.unsent.removeFirst() } }
                continue
            }
            do throws(PushError) {
                if try channel.push(&next) == .foundOnTopic {
                    context.emit(.notice("push: a push whose answer was lost had reached ntfy: not sent again"))
                }
                state.update { state in
                    if state.unsent.first?.id == next.id { state.unsent.removeFirst() }
                    state.lastSaid = ""
                }
            } catch {
                say(error, context: context)
                let tried = next
                state.update { state in
                    if let index = state.unsent.firstIndex(where: { $0.id == tried.id }) {
                        state.unsent[index].tried = tried.tried
                    }
                    if !Self.mayHeal(error) { state.unsent.removeAll { $0.id == tried.id } }
                    state.flushing = false
                }
                return
            }
        }
    }

    /// After `Limits.yield` s, whether `moment`'s request is on the topic already (pushed by
    /// `home up`): then it is said, and not pushed again. A moment without buttons is pushed.
    private func pushedByOtherEnd(_ moment: AgentMoment, channel: PushChannel, context: ChannelContext) -> Bool {
        let notice = PushNotice(detail: settings.detail)
        guard !notice.answers(for: moment).isEmpty, let id = notice.requestID(of: moment) else { return false }
        let until = Date() + Limits.yield
        while Date() < until, !context.isStopped { Thread.sleep(forTimeInterval: 0.1) }
        guard (try? channel.alreadyPushed(requestID: id)) == true else { return false }
        context.emit(
            .notice(
                "push: \(OutsideText.shown(id, secrets: context.secrets, limit: 128)) was pushed by the other end already"
            ))
        return true
    }

    /// Whether a push that failed so may go through later (the server away), rather than never
    /// (a certificate or a token refused, a bad answer: said, and dropped).
    private static func mayHeal(_ error: PushError) -> Bool {
        switch error {
        case .transport, .timedOut, .silent, .ended: true
        case .status(_, let status, _): status >= 500 || status == 429
        default: false
        }
    }

    func answered(requestID: String, context: ChannelContext) {
        var here = false
        state.update { here = $0.answeredHere.contains(requestID) }
        var kept = false
        state.update { state in
            let before = state.unsent.count
            state.unsent.removeAll { PushNotice(detail: settings.detail).requestID(of: $0.moment) == requestID }
            kept = state.unsent.count != before
        }
        // Never pushed: nothing on the phone to follow up.
        guard !here, !kept, let channel = state.value.channel else { return }
        do throws(PushError) { try channel.answeredElsewhere(requestID: requestID) } catch {
            say(error, context: context)
        }
    }

    func stop() {
        state.value.listener?.stop()
    }

    /// The reply listener's counts (tests): streams opened, taps answered, taps refused.
    var counts: (opened: Int, answered: Int, refused: Int)? { state.value.listener?.counts }

    /// Waits until the reply stream is open (tests).
    func waitUntilListening(timeout: Double) -> Bool { state.value.listener?.waitUntilOpen(timeout: timeout) ?? false }

    /// Sends a verified tap's answer to OpenCode, noting the request as answered here first (its
    /// `*.replied` event may come before the answer's own reply; a tap whose answer failed is
    /// not followed up either: its nonces are spent and OpenCode said why).
    private func send(_ answer: PushAnswer, to id: String, directory: String?, context: ChannelContext) throws {
        guard !context.isStopped else { throw NoAnswerer(what: "octunnel is stopping") }
        state.update { _ = $0.answeredHere.insert(id) }
        switch answer {
        case .permission(let reply):
            guard let send = context.answerers.permission else {
                throw NoAnswerer(what: "nothing can answer a permission here")
            }
            try send(id, directory, reply)
        case .question(let reply):
            guard let send = context.answerers.question else {
                throw NoAnswerer(what: "nothing can answer a question here")
            }
            try send(id, directory, reply)
        }
    }

    /// Says a push that failed, once until the failure changes (ntfy down: one line, not one a moment).
    private func say(_ error: PushError, context: ChannelContext) {
        let text =
            "push: "
            + OutsideText.redacting(error.localizedDescription, secrets: context.secrets + [token].compactMap { $0 })
        var fresh = false
        state.update { state in
            fresh = state.lastSaid != text
            state.lastSaid = text
        }
        if fresh { context.emit(.warning(text)) }
    }

    /// Why a tap's answer could not be sent at all.
    private struct NoAnswerer: LocalizedError {
        let what: String
        var errorDescription: String? { what }
    }
}
