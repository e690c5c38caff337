import Foundation

/// What `tunnel up` does with the agent's moments (`--notify-command`, `--no-notify`).
public struct NotifyOptions: Sendable {
    /// Follow OpenCode's event stream and notify (`--no-notify` turns it off).
    public var enabled = true
    /// A program run once per moment, no shell, the facts in its environment (`AgentMoment.environment`).
    public var command: String?
    /// Seconds the program may run before it is killed.
    public var commandTimeout = Double(defaultTimeout)
    /// `--notify-timeout`'s default and its bounds, in seconds.
    public static let defaultTimeout = 10
    public static let timeoutRange = 1...600
    /// Show a desktop notification when a desktop session is there.
    public var desktop = true

    public init(enabled: Bool = true, command: String? = nil) {
        self.enabled = enabled
        self.command = command
    }
}

/// Where each moment goes: one line on stderr, always (an engine event), and `status`; the
/// user's program; the desktop (the freedesktop Notifications service through `notify-send` on
/// Linux when a session bus is there, `osascript` on macOS). A program or a desktop that fails or
/// hangs is reported and never fatal, and never holds up the next moment.
///
/// Bounded whatever the home sends (issue 48): each moment is first redacted (the OpenCode
/// password and its Basic token, on every surface), then admitted by a `NotifyBudget` (per kind,
/// a few at once and then one every few seconds) or held and merged into one "+N more" notice;
/// the programs run on at most `Limits.lanes` threads, made as needed and kept, from one queue of
/// at most `Limits.queued` jobs: never more than `Limits.lanes` children at once, never a thread
/// per moment. Each program leads its own process group, killed whole at its time limit, and
/// gets no `OPENCODE_*` variable; `stop()` kills what runs and waits for it.
///
/// A permission's desktop notification carries actions and waits for a choice
/// (`NotificationAnswer`), and so does a question's with a few options
/// (`QuestionNotificationAnswer`), holding its lane while it waits: at most `Limits.answering`
/// wait at once, each at most `NotificationAnswer.wait` s; past that bound a permission or a
/// question is shown as before, without actions, so a flood cannot pin the lanes.
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

    private let options: NotifyOptions
    private let emit: @Sendable (EngineEvent) -> Void
    /// This process's environment without `OPENCODE_*` (the password is there): the programs'.
    private let environment: [String: String]
    private let record: @Sendable (AgentMoment) -> Void
    private let secrets: [String]
    private let desktop: Bool
    private let groups = ChildGroups()
    private let condition = NSCondition()
    private var budget = NotifyBudget(burst: Limits.burst, refill: Limits.refill)
    private var jobs: [Job] = []
    private var lanes = 0
    private var idleLanes = 0
    private var stopped = false
    private let answer: PermissionAnswerer?
    private let answerQuestion: QuestionAnswerer?
    private var answering = 0

    /// One program to run for a moment.
    private enum Job {
        case command(environment: [String: String])
        case desktop(path: String, arguments: [String])
        /// A permission's or a question's notification, with actions while fewer than `Limits.answering` wait.
        case answerable(AgentMoment)
    }

    init(options: NotifyOptions, environment: [String: String] = ProcessInfo.processInfo.environment, secrets: [String] = [],
         record: @escaping @Sendable (AgentMoment) -> Void = { _ in }, answer: PermissionAnswerer? = nil,
         answerQuestion: QuestionAnswerer? = nil, emit: @escaping @Sendable (EngineEvent) -> Void) {
        self.options = options
        self.answer = answer
        self.answerQuestion = answerQuestion
        self.environment = environment.filter { !$0.key.hasPrefix("OPENCODE_") }
        self.secrets = secrets
        self.record = record
        self.emit = emit
        desktop = options.desktop && Self.desktopCommand(AgentMoment(kind: .finished, sessionID: "", title: nil, directory: nil, detail: nil),
                                                         environment: environment) != nil
    }

    /// Programs per moment told.
    private var jobsPerMoment: Int { (options.command == nil ? 0 : 1) + (desktop ? 1 : 0) }

    /// How many of `jobsPerMoment`-sized moments the queue can take now.
    private var room: Int {
        jobsPerMoment == 0 ? Int.max : max(0, Limits.queued - jobs.count) / jobsPerMoment
    }

    /// Tells `moment` (redacted first) now, or holds it for a merged notice; never waits.
    func notify(_ moment: AgentMoment) {
        let moment = moment.redacted(secrets)
        condition.lock()
        guard !stopped else { return condition.unlock() }
        let told = budget.admit(moment, now: MonotonicClock.now(), room: room > 0)
        if let told { jobs += jobs(for: told) }
        wakeLane()
        condition.unlock()
        if let told { tell(told) }
    }

    /// Ends every program that runs (its whole group) and waits for them, up to
    /// `Limits.stopWait` s; nothing is told after.
    func stop() {
        condition.lock()
        stopped = true
        jobs.removeAll()
        condition.broadcast()
        condition.unlock()
        groups.endAll()
        condition.lock()
        let until = Date().addingTimeInterval(Limits.stopWait)
        while lanes > 0, condition.wait(until: until) {}
        condition.unlock()
    }

    /// How many programs run now (tests).
    var running: Int { groups.count }

    /// The line on stderr and the record for `status`, at once.
    private func tell(_ moment: AgentMoment) {
        emit(.notification(moment))
        record(moment)
    }

    private func jobs(for moment: AgentMoment) -> [Job] {
        var jobs: [Job] = []
        if options.command != nil { jobs.append(.command(environment: environment.merging(moment.environment) { $1 })) }
        let answerable = (answer != nil && NotificationAnswer.answerable(moment))
            || (answerQuestion != nil && QuestionNotificationAnswer.answerable(moment))
        if desktop, answerable {
            jobs.append(.answerable(moment))
        } else if desktop, let command = Self.desktopCommand(moment, environment: environment) {
            jobs.append(.desktop(path: command.path, arguments: command.arguments))
        }
        return jobs
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
        switch job {
        case .command(let environment):
            guard let command = options.command else { return }
            Self.runCommand(command, environment: environment, timeout: options.commandTimeout, groups: groups, secrets: secrets, emit: emit)
        case .desktop(let path, let arguments):
            _ = try? ChildProcess.run(path, arguments, environment: environment, timeout: 5, groups: groups)
        case .answerable(let moment):
            condition.lock()
            let waits = !stopped && answering < Limits.answering
            if waits { answering += 1 }
            condition.unlock()
            guard let command = Self.desktopCommand(moment, environment: environment, actions: waits, secrets: secrets) else { return }
            guard waits else {
                _ = try? ChildProcess.run(command.path, command.arguments, environment: environment, timeout: 5, groups: groups)
                return
            }
            let result = try? ChildProcess.run(command.path, command.arguments, environment: environment, timeout: NotificationAnswer.wait + 5,
                                               groups: groups)
            condition.lock()
            answering -= 1
            let goOn = !stopped
            condition.unlock()
            guard goOn, let result else { return }
            if let question = moment.question, QuestionNotificationAnswer.answerable(moment) {
                guard let reply = QuestionNotificationAnswer.chosen(result.stdout, question) else { return }
                send(reply, to: question, for: moment)
            } else if let reply = NotificationAnswer.chosen(result.stdout) {
                send(reply, for: moment)
            }
        }
    }

    /// Sends the answer chosen on a question's notification (the label octunnel stored for that
    /// option, or a dismissal) and says the outcome as `send(_:for:)` does.
    private func send(_ reply: QuestionReply, to question: AskedQuestion, for moment: AgentMoment) {
        guard let answerQuestion else { return }
        do throws(OCTunnelError) {
            try answerQuestion(question.id, moment.directory, reply)
            emit(.notice(QuestionNotificationAnswer.sentLine(reply, moment)))
        } catch {
            failed("the answer chosen on the notification was not sent", error, headline: QuestionNotificationAnswer.failedHeadline(moment))
        }
    }

    /// Sends the reply chosen on `moment`'s notification and says the outcome: a line on stderr;
    /// a follow-up notification only when it failed (answered elsewhere, no tunnel, refused).
    private func send(_ reply: PermissionReply, for moment: AgentMoment) {
        guard let answer, let id = moment.permissionID else { return }
        do throws(OCTunnelError) {
            try answer(id, moment.directory, reply)
            emit(.notice(NotificationAnswer.sentLine(reply, moment)))
        } catch {
            failed("the \(reply.rawValue) chosen on the notification was not sent", error, headline: NotificationAnswer.failedHeadline(moment))
        }
    }

    /// A reply chosen on a notification that was not sent: a warning, and a follow-up notification.
    private func failed(_ what: String, _ error: OCTunnelError, headline: String) {
        let said = OutsideText.redacting(error.errorDescription ?? "the reply failed", secrets: secrets)
        emit(.warning("\(what): \(said)"))
        if let path = Self.notifySend {
            _ = try? ChildProcess.run(path, ["--app-name=octunnel", "--urgency=normal", "--", headline, Self.desktopBody(said)],
                                      environment: environment, timeout: 5, groups: groups)
        }
    }

    /// `--notify-command`: run, waited for up to `timeout` s (its whole process group killed then,
    /// with `groups`); a failure is a warning.
    static func runCommand(_ command: String, environment: [String: String], timeout: Double, groups: ChildGroups? = nil, secrets: [String] = [],
                           emit: @Sendable (EngineEvent) -> Void) {
        let shown = OutsideText.shown(command, limit: 120)
        do {
            let result = try ChildProcess.run(command, [], environment: environment, timeout: timeout, searchPath: !command.contains("/"),
                                              groups: groups)
            if result.timedOut {
                emit(.warning("--notify-command \(shown) ran longer than \(Int(timeout)) s and was stopped"))
            } else if result.status != 0 {
                let said = result.stderr.split(separator: "\n").last.map { ": " + OutsideText.shown(String($0), secrets: secrets, limit: 200) } ?? ""
                emit(.warning("--notify-command \(shown) exited \(result.status)\(said)"))
            }
        } catch {
            emit(.warning("--notify-command \(shown) could not start: \(error.description)"))
        }
    }

    /// The desktop's own notifier, when a desktop session is there: `notify-send` with a session
    /// bus (`DBUS_SESSION_BUS_ADDRESS`), `osascript` on macOS; nil otherwise (a server, ssh).
    /// With `actions` (a permission or a question that may be answered from it, Linux only), it
    /// carries `NotificationAnswer`'s or `QuestionNotificationAnswer`'s actions and waits for a choice.
    static func desktopCommand(_ moment: AgentMoment, environment: [String: String], actions: Bool = false,
                               secrets: [String] = []) -> (path: String, arguments: [String])? {
#if os(macOS)
        func quoted(_ text: String) -> String { "\"" + text.replacingScalars("\\", with: "\\\\").replacingScalars("\"", with: "\\\"") + "\"" }
        return ("/usr/bin/osascript", ["-e", "display notification \(quoted(moment.message)) with title \(quoted(moment.headline))"])
#else
        guard environment["DBUS_SESSION_BUS_ADDRESS"]?.isEmpty == false else { return nil }
        guard let path = notifySend else { return nil }
        return (path, ["--app-name=octunnel", "--urgency=\(moment.kind == .finished ? "normal" : "critical")"]
                    + (actions ? actionArguments(moment, secrets: secrets) : []) + ["--", moment.headline, desktopBody(moment.message)])
#endif
    }

    /// The actions of `moment`'s notification: a question's options where it offers them, else a permission's replies.
    static func actionArguments(_ moment: AgentMoment, secrets: [String]) -> [String] {
        guard let question = moment.question, QuestionNotificationAnswer.answerable(moment) else { return NotificationAnswer.arguments }
        return QuestionNotificationAnswer.arguments(question, secrets: secrets)
    }

    /// Where `notify-send` is, if it is.
    private static var notifySend: String? {
        ["/usr/bin/notify-send", "/bin/notify-send"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The body as notify-send must be given it to show `text` as it is: notify-send reads C
    /// escapes in the body (`g_strcompress`: a title's `\033` would become a real escape byte),
    /// so backslashes are doubled; and the Notifications service reads the body as markup
    /// (`<b>`, `&amp;`), so `&`, `<` and `>` are written as entities. The summary is plain text
    /// to both and goes as it is.
    static func desktopBody(_ text: String) -> String {
        var body = ""
        for character in text {
            switch character {
            case "\\": body += "\\\\"
            case "&": body += "&amp;"
            case "<": body += "&lt;"
            case ">": body += "&gt;"
            default: body.append(character)
            }
        }
        return body
    }
}
