import Foundation

/// One place a told moment goes: the line on stderr, the desktop, the user's program, a phone
/// push. The `Notifier` above the channels owns what every channel shares: the moment arrives
/// redacted (the OpenCode password and its Basic token out of every text), admitted by the
/// burst budget (a flood reaches a channel as one "+N more" notice), in the order it was told,
/// and, for a channel that is not `immediate`, on one of the notifier's bounded lanes. A channel
/// only renders and carries it.
///
/// A channel may answer (a notification's actions, a push's buttons): it sends the chosen reply
/// through `ChannelContext.answer`, the same path as `octunnel permission allow`. A channel with
/// a lifetime of its own (a reply stream to listen on) starts with the notifier and is stopped
/// with it.
protocol NotificationChannel: AnyObject, Sendable {
    /// What the channel is called in a warning ("--notify-command", "the desktop").
    var name: String { get }
    /// True for a channel told at once on the teller's thread (it must never block: stderr);
    /// false for one run on a notifier lane, which may take up to its own time bound.
    var immediate: Bool { get }
    /// Starts what lives as long as the notifier (a listener); `context` is the notifier's.
    func start(_ context: ChannelContext)
    /// Carries `moment` (already redacted and admitted); a failure is said through
    /// `context.emit`, never thrown: one channel's trouble never holds up another's.
    func deliver(_ moment: AgentMoment, context: ChannelContext)
    /// Request `requestID` (a permission's or a question's) was answered, wherever it was (OpenCode's
    /// `*.replied` event): a channel that showed a way to answer it may say so and retire it. Run on a
    /// notifier lane for a channel that is not `immediate`.
    func answered(requestID: String, context: ChannelContext)
    /// Whether `answered` does anything (false: the notifier queues nothing for it).
    var followsAnswers: Bool { get }
    /// Ends what it runs and started (a program's whole process group, a listener) and waits for it.
    func stop()
}

extension NotificationChannel {
    func start(_ context: ChannelContext) {}
    func answered(requestID: String, context: ChannelContext) {}
    var followsAnswers: Bool { false }
    func stop() {}
}

/// The answerers a running `up` gives its channels (nil: the channels cannot answer).
struct ChannelAnswerers: Sendable {
    var permission: PermissionAnswerer?
    var question: QuestionAnswerer?

    init(permission: PermissionAnswerer? = nil, question: QuestionAnswerer? = nil) {
        (self.permission, self.question) = (permission, question)
    }
}
