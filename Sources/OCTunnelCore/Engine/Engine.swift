/// octunnel's one engine, for both roles: one SSH session (`SessionDriver`) on one `EventLoop`
/// thread carrying a list of forwards of either direction, each a `SessionForward` of its own:
/// a `LocalForward` per forward this machine listens for (`tunnel up`: OpenCode's, then each
/// `-L`), a `RemoteForward` per forward the VPS listens for (`home up`: OpenCode's, then each
/// `-R`). Idle, it sleeps in poll. The pieces are in Engine/ and Forward/; this is their facade.
public final class Engine: @unchecked Sendable {
    private let loop: EventLoop
    private let driver: SessionDriver
    /// The forwards this machine listens for, in their order (OpenCode's first, when there are any).
    private let locals: [LocalForward]
    /// The forwards the VPS listens for, in their order.
    private let remotes: [RemoteForward]
    /// Tells the user, from any thread.
    let emit: @Sendable (EngineEvent) -> Void

    /// `tunnel up`'s engine: binds every local listener now, so a busy port fails before
    /// anything else happens.
    public convenience init(tunnel options: TunnelOptions, onEvent: @escaping @Sendable (EngineEvent) -> Void) throws {
        let locals = try options.forwards.map { (forward) throws -> LocalForward in
            try LocalForward(options: options, forward: forward, emit: onEvent)
        }
        let loop = try Engine.eventLoop {
            ForwardError.cannotListen(
                bind: options.openCode.listen.host, port: options.openCode.listen.port, reason: $0.description)
        }
        self.init(
            loop: loop, settings: options.connection, keepalive: options.keepalive,
            exitOnFirstFailure: options.exitOnFirstFailure,
            waitsOutPenalty: options.waitsOutPenalty, locals: locals, remotes: [], onEvent: onEvent)
    }

    /// `home up`'s engine: resolves every home address now, so a bad one fails before any
    /// network work. A forward the VPS forbids stops alone, said as a warning; the run ends
    /// (exit 77) only when the VPS forbids every one.
    public convenience init(home options: HomeForwardOptions, onEvent: @escaping @Sendable (EngineEvent) -> Void) throws
    {
        let loop = try Engine.eventLoop {
            ConnectError.sshFailure(
                host: options.connection.target.host, port: options.connection.target.port, detail: $0.description)
        }
        let all = RemoteForwardList()
        let waker = UncheckedLoop(loop: loop)
        let remotes = try options.forwards.enumerated().map { (index, forward) throws -> RemoteForward in
            try RemoteForward(
                forward, index: index, options: options, emit: onEvent,
                forbidden: { error in
                    // The others serve on; the run ends once the VPS forbids every forward.
                    if all.forwards.allSatisfy({ $0.fatal != nil }) {
                        loop.requestStop()
                    } else {
                        onEvent(.warning(error.localizedDescription))
                    }
                }, wake: { waker.loop.wakeUp() })
        }
        all.forwards = remotes
        self.init(
            loop: loop, settings: options.connection, keepalive: options.keepalive,
            exitOnFirstFailure: options.exitOnFirstFailure,
            waitsOutPenalty: true, locals: [], remotes: remotes, onEvent: onEvent)
    }

    /// A new event loop (its wake pipe); a failure to make one is thrown as `failure` words it for the role.
    private static func eventLoop(orThrow failure: (SystemError) -> any Error) throws -> EventLoop {
        do { return try EventLoop() } catch { throw failure(error) }
    }

    private init(
        loop: EventLoop, settings: ConnectionSettings, keepalive: Double, exitOnFirstFailure: Bool,
        waitsOutPenalty: Bool,
        locals: [LocalForward], remotes: [RemoteForward], onEvent: @escaping @Sendable (EngineEvent) -> Void
    ) {
        self.loop = loop
        self.locals = locals
        self.remotes = remotes
        emit = onEvent
        driver = SessionDriver(
            settings: settings, keepalive: keepalive, exitOnFirstFailure: exitOnFirstFailure,
            waitsOutPenalty: waitsOutPenalty,
            loop: loop, forwards: locals + remotes, emit: onEvent)
    }

    /// The ports this machine listens on, one per forward it listens for in their order (useful with port 0).
    public var listenPorts: [Int] { locals.map(\.listenPort) }

    /// Why the VPS last refused the `index`th local forward (e.g. "administratively prohibited"),
    /// if it has; safe from any thread, so a health test can name the refusal instead of
    /// "nothing listens".
    public func lastForwardRefusal(_ index: Int) -> String? {
        locals.indices.contains(index) ? locals[index].lastForwardRefusal : nil
    }

    /// Answers `status` at `endpoint` from the loop (call before `run()`, on its thread).
    /// Throws when it cannot; the engine runs as well without.
    public func serveStatus(at endpoint: StatusEndpoint) throws(StatusServerError) {
        try driver.serveStatus(at: endpoint)
    }

    /// OpenCode's forward listens on `port` too (loopback), for links that name it: OpenCode 2's
    /// pair links name the home server's own port (`PairPort`). Safe from any thread.
    func alsoListenForOpenCode(port: Int) -> LocalForward.AlsoListen {
        guard let openCode = locals.first(where: { $0.forward.isOpenCode }) else {
            return .unavailable("no OpenCode forward")
        }
        let result = openCode.alsoListen(port: port)
        loop.wakeUp()
        return result
    }

    /// `tunnel up`'s own event stream now comes from local `port` (nil: none): a burst's extra
    /// session never serves it (it would keep two sessions up while it lives); safe from any thread.
    func keepOffBurstSessions(port: Int?) {
        for local in locals { local.keepOffExtra(port: port) }
    }

    /// Keeps a notification for `status` (its last three); safe from any thread.
    func recordNotification(_ moment: AgentMoment) {
        let notified = StatusSnapshot.Notified(
            kind: moment.kind.rawValue, text: "\(moment.headline): \(moment.message)", at: moment.at)
        driver.notifications.update { $0 = Array(($0 + [notified]).suffix(3)) }
    }

    /// Keeps how many permission requests and questions wait for an answer, for `status`; safe
    /// from any thread.
    func recordPermissionsWaiting(_ count: Int) { driver.permissionsWaiting.value = count }

    /// Keeps the last health test for `status`; safe from any thread.
    public func recordHealth(_ health: StatusSnapshot.Health) { driver.health.value = health }

    /// Asks the loop to stop cleanly (listens are cancelled on the way out); safe from any thread.
    public func stop() { loop.requestStop() }

    /// Makes SIGINT/SIGTERM stop this engine (a second signal exits at once).
    public func handleSignals() { loop.handleSignals() }

    /// Runs until `stop()` or a signal (returns) or a failure retrying cannot fix (throws),
    /// including a VPS that forbids every listen of this engine.
    public func run() throws {
        try driver.run()
        if !remotes.isEmpty, remotes.allSatisfy({ $0.fatal != nil }), let fatal = remotes.first?.fatal { throw fatal }
    }
}

/// The engine's remote forwards, for the closure each one calls when the VPS forbids it (made before them).
private final class RemoteForwardList {
    var forwards: [RemoteForward] = []
}
