import Foundation

/// Where each moment goes: to every `NotificationChannel` of the run (the line on stderr,
/// always; the user's program; the desktop; any channel added), and to `status`. A channel that
/// fails or hangs is reported and never fatal, and never holds up the next moment.
///
/// Bounded whatever the home sends (issue 48), in this one place above the channels: each
/// moment is first redacted (the OpenCode password and its Basic token, on every surface), then
/// admitted by a `NotifyBudget` (per kind, a few at once and then one every few seconds) or held
/// and merged into one "+N more" notice, and told to the channels in that order. The channels
/// that are not `immediate` run on at most `Limits.lanes` threads, made as needed and kept, from
/// one queue of at most `Limits.queued` jobs: never more than `Limits.lanes` children at once,
/// never a thread per moment. Their programs lead their own process groups (`ChildGroups`),
/// killed whole at their time limit and at `stop()`, with no `OPENCODE_*` variable.
///
/// A channel that answers (a permission's desktop notification) sends the choice through its
/// `ChannelContext`, the same path as `octunnel permission allow`, at most `Limits.answering` of
/// them waiting at once.
final class Notifier: @unchecked Sendable {
    /// The notifier's bounds.
    enum Limits {
        /// Programs (commands and desktop notifications) running at once.
        static let lanes = 4
        /// Programs waiting for a lane.
        static let queued = 8
        /// Moments of a kind told at once, and the seconds after which one more may be.
        static let burst = 8
        static let refill = 4.0
        /// Seconds `stop()` waits for the programs it killed.
        static let stopWait = 3.0
        /// Notifications with actions waiting for a choice at once (each holds a lane).
        static let answering = 2
    }

    private let context: ChannelContext
    private let record: @Sendable (AgentMoment) -> Void
    /// Told at once, on the teller's thread.
    private let immediate: [any NotificationChannel]
    /// Run on the lanes, one job per channel and moment.
    private let queued: [any NotificationChannel]
    private let condition = NSCondition()
    private var budget = NotifyBudget(burst: Limits.burst, refill: Limits.refill)
    private var jobs: [Job] = []
    private var lanes = 0
    private var idleLanes = 0
    private var stopped = false

    /// One channel to run for a moment, or to tell that a request was answered.
    private struct Job {
        let channel: any NotificationChannel
        let moment: AgentMoment?
        var answered: String? = nil
    }

    /// A notifier over `channels` (each started now, stopped by `stop()`); `answerers` send the
    /// replies a channel is given.
    init(
        channels: [any NotificationChannel], environment: [String: String] = ProcessInfo.processInfo.environment,
        secrets: [String] = [], record: @escaping @Sendable (AgentMoment) -> Void = { _ in },
        answerers: ChannelAnswerers = ChannelAnswerers(), emit: @escaping @Sendable (EngineEvent) -> Void
    ) {
        context = ChannelContext(
            environment: environment, secrets: secrets, groups: ChildGroups(), answerers: answerers, emit: emit)
        self.record = record
        immediate = channels.filter(\.immediate)
        queued = channels.filter { !$0.immediate }
        for channel in channels { channel.start(context) }
    }

    /// A notifier over the channels `options` asks for (`NotifyOptions.channels`).
    convenience init(
        options: NotifyOptions, environment: [String: String] = ProcessInfo.processInfo.environment,
        secrets: [String] = [],
        record: @escaping @Sendable (AgentMoment) -> Void = { _ in }, answer: PermissionAnswerer? = nil,
        answerQuestion: QuestionAnswerer? = nil, emit: @escaping @Sendable (EngineEvent) -> Void
    ) {
        self.init(
            channels: options.channels(environment: environment), environment: environment, secrets: secrets,
            record: record,
            answerers: ChannelAnswerers(permission: answer, question: answerQuestion), emit: emit)
    }

    /// How many of the moments the queue can take now.
    private var room: Int {
        queued.isEmpty ? Int.max : max(0, Limits.queued - jobs.count) / queued.count
    }

    /// Tells `moment` (redacted first) now, or holds it for a merged notice; never waits.
    func notify(_ moment: AgentMoment) {
        let moment = moment.redacted(context.secrets)
        condition.lock()
        guard !stopped else { return condition.unlock() }
        let told = budget.admit(moment, now: MonotonicClock.now(), room: room > 0)
        if let told { jobs += jobs(for: told) }
        wakeLane()
        condition.unlock()
        if let told { tell(told) }
    }

    /// Tells the channels that follow answers that request `requestID` was answered (wherever it
    /// was): at once for an immediate channel, else as a job on a lane (dropped when the queue is
    /// full: a follow-up is a courtesy, the buttons fail safe); never waits.
    func answered(requestID: String) {
        let requestID = OutsideText.redacting(requestID, secrets: context.secrets)
        condition.lock()
        guard !stopped else { return condition.unlock() }
        let following = queued.filter(\.followsAnswers)
        if !following.isEmpty, jobs.count + following.count <= Limits.queued {
            jobs += following.map { Job(channel: $0, moment: nil, answered: requestID) }
        }
        wakeLane()
        condition.unlock()
        for channel in immediate where channel.followsAnswers {
            channel.answered(requestID: requestID, context: context)
        }
    }

    /// Ends every program that runs (its whole group) and waits for them, up to
    /// `Limits.stopWait` s, and stops the channels (once); nothing is told after.
    func stop() {
        condition.lock()
        let first = !stopped
        stopped = true
        jobs.removeAll()
        condition.broadcast()
        condition.unlock()
        context.stop()
        context.groups.endAll()
        if first { for channel in immediate + queued { channel.stop() } }
        condition.lock()
        let until = Date().addingTimeInterval(Limits.stopWait)
        while lanes > 0, condition.wait(until: until) {}
        condition.unlock()
    }

    /// How many programs run now (tests).
    var running: Int { context.groups.count }

    /// The immediate channels (the line on stderr) and the record for `status`, at once.
    private func tell(_ moment: AgentMoment) {
        for channel in immediate { channel.deliver(moment, context: context) }
        record(moment)
    }

    private func jobs(for moment: AgentMoment) -> [Job] {
        queued.map { Job(channel: $0, moment: moment) }
    }

    /// With the lock: lanes for what waits: the idle ones woken, and new ones made for the jobs
    /// they cannot take while there are fewer than `Limits.lanes` (one, for a held notice's time).
    private func wakeLane() {
        guard !jobs.isEmpty || budget.heldCount > 0 else { return }
        if idleLanes > 0 { condition.broadcast() }
        var wanted = max(jobs.count - idleLanes, lanes == 0 ? 1 : 0)
        while wanted > 0, lanes < Limits.lanes {
            lanes += 1
            wanted -= 1
            let thread = Thread { [self] in lane() }
            thread.name = "octunnel-notify"
            thread.start()
        }
    }

    /// One lane: tells the held notices whose time came, runs the jobs, and sleeps until a job
    /// comes or a held notice may go (no tick when nothing waits).
    private func lane() {
        condition.lock()
        while !stopped {
            let released = budget.release(now: MonotonicClock.now(), room: room)
            if !released.isEmpty {
                for notice in released { jobs += jobs(for: notice) }
                wakeLane()
                condition.unlock()
                released.forEach(tell)
                condition.lock()
                continue
            }
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                run(job)
                condition.lock()
                continue
            }
            idleLanes += 1
            if let next = budget.nextRelease(now: MonotonicClock.now()) {
                _ = condition.wait(until: Date().addingTimeInterval(max(0.01, next - MonotonicClock.now())))
            } else {
                condition.wait()
            }
            idleLanes -= 1
        }
        lanes -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func run(_ job: Job) {
        if let moment = job.moment { job.channel.deliver(moment, context: context) }
        if let answered = job.answered { job.channel.answered(requestID: answered, context: context) }
    }
}
