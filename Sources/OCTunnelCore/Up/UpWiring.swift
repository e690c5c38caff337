import Foundation

/// What a running `up` starts once OpenCode has answered its health test, for both ends: the
/// event follower (`EventFollower`: OpenCode's stream, its catch-up after every cut) with its
/// notifier and channels (`NotifyOptions.channels` and any given here), the answerers a channel
/// replies through (`PermissionClient`, the path of `octunnel permission allow`), and, on the
/// laptop, the pair port (`PairPort`). `tunnel up` reaches OpenCode through its local forward,
/// `home up` directly at `--home-host:--home-port`. Each is made once per run; none after `stop()`.
public final class UpWiring: @unchecked Sendable {
    /// The run's notification choices (`enabled` false: no follower).
    let notify: NotifyOptions
    let credentials: OpenCodeCredentials
    /// `tunnel up`'s pair-port choice; nil on `home up` (its links are already home's).
    let pairPort: PairPortChoice?
    /// Channels beside the ones `notify` asks for (a test's, a channel made elsewhere).
    let channels: [any NotificationChannel]
    private let environment: [String: String]
    private let lock = NSLock()
    private var follower: EventFollower?
    private var pairSaid = false
    private var stopped = false

    /// The wiring of one run: `notify`'s channels, OpenCode reached with `credentials`, and on the
    /// laptop its `pairPort` choice.
    public convenience init(notify: NotifyOptions, credentials: OpenCodeCredentials, pairPort: PairPortChoice? = nil) {
        self.init(notify: notify, credentials: credentials, pairPort: pairPort, channels: [])
    }

    /// As the public one, with `channels` beside `notify`'s and the programs' `environment`.
    init(
        notify: NotifyOptions, credentials: OpenCodeCredentials, pairPort: PairPortChoice?,
        channels: [any NotificationChannel],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        (self.notify, self.credentials, self.pairPort, self.channels) = (notify, credentials, pairPort, channels)
        self.environment = environment
    }

    /// OpenCode answered `report` at `host:port` (the tunnel's local end, or OpenCode at home):
    /// follows its event stream (started the first time, pointed at the stream that answered
    /// after; one that started before `sessionSince`, on a session since replaced, is moved to the
    /// new one) and, on the laptop, says or opens the pair port once.
    func openCodeAnswered(_ report: HealthReport, host: String, port: Int, engine: Engine, sessionSince: Double? = nil)
    {
        if notify.enabled {
            let path =
                report.eventsPath.isEmpty ? (report.generation.eventPaths.first ?? "/api/event") : report.eventsPath
            follower(host: host, port: port, engine: engine)?.follow(path: path, movingStreamsBefore: sessionSince)
        }
        if let pairPort, let plan = PairPort.plan(for: report, localPort: port, choice: pairPort), firstPairWord() {
            let guessed = report.serverPort == nil
            switch plan {
            case .listen(let pair):
                engine.emit(
                    PairPort.event(
                        port: pair, localPort: port, outcome: engine.alsoListenForOpenCode(port: pair),
                        guessed: guessed,
                        given: pairPort != .automatic))
            case .off(let pair):
                engine.emit(PairPort.event(port: pair, localPort: port, outcome: nil, guessed: guessed))
            case .notOpenCodes(let pair):
                engine.emit(PairPort.notOpenCodesEvent(port: pair, localPort: port))
            }
        }
    }

    /// Stops following and ends the channels' programs (their whole groups, waited for): an `up`
    /// leaves none behind.
    public func stop() {
        lock.lock()
        stopped = true
        let follower = self.follower
        lock.unlock()
        follower?.stop()
    }

    var isStopped: Bool {
        lock.lock(); defer { lock.unlock() }
        return stopped
    }

    /// The run's one follower, made the first time; nil after `stop()`.
    private func follower(host: String, port: Int, engine: Engine) -> EventFollower? {
        lock.lock(); defer { lock.unlock() }
        guard !stopped else { return nil }
        if let follower { return follower }
        let made = EventFollower(
            host: host, port: port, credentials: credentials,
            notifier: notifier(host: host, port: port, engine: engine),
            waiting: { engine.recordPermissionsWaiting($0) }, ownStream: { engine.keepOffBurstSessions(port: $0) },
            emit: engine.emit)
        follower = made
        return made
    }

    /// The notifier over the run's channels, answering through a `PermissionClient` to `host:port`.
    private func notifier(host: String, port: Int, engine: Engine) -> Notifier {
        let client = PermissionClient(host: host, port: port, credentials: credentials)
        let answerers = ChannelAnswerers(
            permission: { id, directory, reply throws in
                _ = try client.answer(id: id, reply: reply, directories: directory.map { [$0] } ?? [])
            },
            question: { id, directory, reply throws in
                _ = try client.answerQuestion(id: id, reply: reply, directories: directory.map { [$0] } ?? [])
            })
        return Notifier(
            channels: notify.channels(environment: environment) + channels, environment: environment,
            secrets: credentials.secrets, record: { engine.recordNotification($0) }, answerers: answerers,
            emit: engine.emit)
    }

    private func firstPairWord() -> Bool {
        lock.lock(); defer { lock.unlock() }
        defer { pairSaid = true }
        return !pairSaid
    }
}
