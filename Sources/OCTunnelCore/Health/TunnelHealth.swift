import Foundation

/// `tunnel up`'s health test through the tunnel, on a thread of its own each time a session
/// comes up: its result is a `HealthEvent` and the engine's record for `status`, never fatal.
public struct TunnelHealth: Sendable {
    public let timeout: Double
    public let credentials: OpenCodeCredentials
    /// Where the VPS forwards to, and what the home machine runs to listen there (for the
    /// "nothing listens" answer).
    let remote: HostPort
    let reverseCommand: String
    /// The VPS, as the passing line names it.
    let host: String
    /// The address the forward listens on (the test connects there).
    let bind: String
    /// Where to listen for pair links (`TunnelOptions.pairPort`).
    let pairPort: PairPortChoice
    /// Said once per run: where pair links open.
    private let pairSaid = PairOnce()
    /// Follow OpenCode's event stream after a pass and notify (issue 40); off unless set.
    public var notify = NotifyOptions(enabled: false)
    private let follower = FollowerBox()

    /// The test for the tunnel `options` describes.
    public init(options: TunnelOptions, timeout: Double, credentials: OpenCodeCredentials) {
        self.timeout = timeout
        self.credentials = credentials
        remote = options.openCode.target
        reverseCommand = options.reverseCommand(for: options.openCode)
        host = options.connection.target.host
        bind = options.openCode.listen.host
        pairPort = options.pairPort
    }

    /// Starts the test against the forward's `localPort`; `engine` says why a forward was
    /// refused, and keeps the result for `status`.
    func start(localPort: Int, engine: Engine?, emit: @escaping @Sendable (HealthEvent) -> Void) {
        let thread = Thread {
            var check = HealthCheck(localPort: localPort, remote: remote, reverseCommand: reverseCommand, timeout: timeout,
                                    credentials: credentials)
            check.forwardRefusal = { engine?.lastForwardRefusal(0) }
            check.localHost = HealthCheck.address(forBind: bind)
            let event: HealthEvent
            do throws(OCTunnelError) {
                event = .tunnelPassed(try check.run(), host: host, password: credentials.usedText)
            } catch {
                event = .tunnelFailed(error)
            }
            engine?.recordHealth(event.record(checkedAt: Date()))
            emit(event)
            if case .tunnelPassed(let report, _, _) = event, let engine, notify.enabled {
                let path = report.eventsPath.isEmpty ? (report.generation.eventPaths.first ?? "/api/event") : report.eventsPath
                let host = HealthCheck.address(forBind: bind)
                let client = PermissionClient(host: host, port: localPort, credentials: credentials)
                follower.get {
                    EventFollower(host: host, port: localPort, credentials: credentials,
                                  notifier: Notifier(options: notify, secrets: credentials.secrets, record: { engine.recordNotification($0) },
                                                     answer: { id, directory, reply throws(OCTunnelError) in
                                                         _ = try client.answer(id: id, reply: reply, directories: directory.map { [$0] } ?? [])
                                                     },
                                                     answerQuestion: { id, directory, reply throws(OCTunnelError) in
                                                         _ = try client.answerQuestion(id: id, reply: reply, directories: directory.map { [$0] } ?? [])
                                                     },
                                                     emit: engine.emit),
                                  waiting: { engine.recordPermissionsWaiting($0) },
                                  emit: engine.emit)
                }?.follow(path: path)
            }
            if case .tunnelPassed(let report, _, _) = event, let engine, let plan = PairPort.plan(for: report, localPort: localPort, choice: pairPort),
               pairSaid.first() {
                let guessed = report.serverPort == nil
                switch plan {
                case .listen(let port):
                    engine.emit(PairPort.event(port: port, localPort: localPort, outcome: engine.alsoListenForOpenCode(port: port), guessed: guessed,
                                               given: pairPort != .automatic))
                case .off(let port):
                    engine.emit(PairPort.event(port: port, localPort: localPort, outcome: nil, guessed: guessed))
                case .notOpenCodes(let port):
                    engine.emit(PairPort.notOpenCodesEvent(port: port, localPort: localPort))
                }
            }
        }
        thread.start()
    }

    /// Stops following OpenCode's events and ends the notification programs that run (their
    /// whole groups), waiting for them: `tunnel up` leaves none behind.
    func stop() { follower.stop() }
}

/// The run's one event follower, made on the first pass; none after `stop()`.
private final class FollowerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var follower: EventFollower?
    private var stopped = false
    func get(_ make: () -> EventFollower) -> EventFollower? {
        lock.lock(); defer { lock.unlock() }
        guard !stopped else { return nil }
        if let follower { return follower }
        let made = make()
        follower = made
        return made
    }
    func stop() {
        lock.lock()
        stopped = true
        let follower = self.follower
        lock.unlock()
        follower?.stop()
    }
}

/// True once, from any thread.
private final class PairOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func first() -> Bool {
        lock.lock(); defer { lock.unlock() }
        defer { done = true }
        return !done
    }
}
