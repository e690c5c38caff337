import Foundation

/// The phone push as one of the notifier's channels (issue 54): each moment the notifier admits
/// becomes one ntfy message (`PushChannel.push`), its buttons answered by the reply listener that
/// lives as long as the channel (`start`/`stop`). A verified tap goes through the run's answerers
/// (`ChannelContext.answerers`, the path of `octunnel permission allow`: only a request OpenCode
/// still lists, never retried). A request answered anywhere else (the laptop, a terminal,
/// OpenCode's UI: OpenCode's `*.replied` event) gets a follow-up push and its buttons retired; one
/// the phone answered gets none.
final class PushNotificationChannel: NotificationChannel, @unchecked Sendable {
    let name = "the phone push"
    let immediate = false
    let settings: PushSettings
    private let token: String?
    private let state = Locked<State>(State())

    private struct State {
        var channel: PushChannel?
        var listener: ReplyListener?
        /// Requests the phone answered (their `*.replied` event is not "elsewhere").
        var answeredHere = BoundedSet<String>(capacity: 1024)
        /// The last failure said (said again only when it changes).
        var lastSaid = ""
    }

    /// A push through `settings`, with the ntfy access token read from its file (or none).
    init(settings: PushSettings, token: String?) {
        (self.settings, self.token) = (settings, token)
    }

    /// Makes the push with the notifier's secrets and starts listening for the buttons' taps.
    func start(_ context: ChannelContext) {
        let channel = PushChannel(settings: settings, token: token, secrets: context.secrets)
        let listener = channel.listener(
            answer: { [weak self] id, directory, answer in try self?.send(answer, to: id, directory: directory, context: context) },
            report: { context.emit(.notice($0)) })
        state.update { ($0.channel, $0.listener) = (channel, listener) }
        listener.start()
    }

    func deliver(_ moment: AgentMoment, context: ChannelContext) {
        guard let channel = state.value.channel else { return }
        do throws(PushError) {
            try channel.push(moment)
            state.update { $0.lastSaid = "" }
        } catch {
            say(error, context: context)
        }
    }

    func answered(requestID: String, context: ChannelContext) {
        var here = false
        state.update { here = $0.answeredHere.contains(requestID) }
        guard !here, let channel = state.value.channel else { return }
        do throws(PushError) { try channel.answeredElsewhere(requestID: requestID) } catch { say(error, context: context) }
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
            guard let send = context.answerers.permission else { throw NoAnswerer(what: "nothing can answer a permission here") }
            try send(id, directory, reply)
        case .question(let reply):
            guard let send = context.answerers.question else { throw NoAnswerer(what: "nothing can answer a question here") }
            try send(id, directory, reply)
        }
    }

    /// Says a push that failed, once until the failure changes (ntfy down: one line, not one a moment).
    private func say(_ error: PushError, context: ChannelContext) {
        let text = "push: " + OutsideText.redacting(error.localizedDescription, secrets: context.secrets + [token].compactMap { $0 })
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
