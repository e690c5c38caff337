import Foundation

/// `tunnel up` and `home up` around their one engine: the health test (through the tunnel
/// after each connect, or of the home port before listening), the status socket, and every
/// event (the engine's, the health test's, the failure that ends the run) handed to one `onEvent`.
public struct UpRunner: Sendable {
    public let engine: Engine
    public let role: Role
    private let emit: @Sendable (UpEvent) -> Void
    /// `home up`'s home port (OpenCode's), for its health test.
    private let home: HostPort?
    /// `tunnel up`'s health test (and what its passes start), stopped when the engine ends.
    private let health: TunnelHealth?
    /// `home up`'s following of OpenCode (nil: not asked for), stopped when the engine ends.
    private let homeFollowing: HomeFollowing?

    /// The warning for a `--bind` that is not loopback, or nil.
    public static func exposureWarning(bind: String) -> EngineEvent? {
        guard !Sockets.isLoopback(bind) else { return nil }
        return .warning("listening on \(bind): anyone who can reach this machine on that network can use the tunnel")
    }

    /// `tunnel up`: binds the local ports now (69 if busy). `health` (nil: `--no-health`) runs on
    /// OpenCode's first `forwarding` and after every later `connected`.
    public init(
        tunnel options: TunnelOptions, health: TunnelHealth?, onEvent: @escaping @Sendable (UpEvent) -> Void
    ) throws {
        emit = onEvent
        role = .tunnel
        home = nil
        self.health = health
        homeFollowing = nil
        let box = OpenCodeForwardBox()
        let healthEvent: @Sendable (HealthEvent) -> Void = { onEvent(.health($0)) }
        engine = try Engine(tunnel: options) { event in
            onEvent(.engine(event))
            guard let health else { return }
            if case .connected = event, let port = box.port {
                health.start(localPort: port, engine: box.engine, emit: healthEvent)
            }
            // OpenCode's forward only: the others are not OpenCode (`tunnel check` proves them).
            if case .forwarding(let listen, _, _, true) = event {
                box.port = listen.port
                health.start(localPort: listen.port, engine: box.engine, emit: healthEvent)
            }
        }
        box.engine = engine
    }

    /// `home up`: resolves the home addresses now. `wiring` (nil: `--no-notify` or no health
    /// test) follows OpenCode at home once its health test passes (`HomeFollowing`).
    public init(
        home options: HomeForwardOptions, wiring: UpWiring? = nil, healthTimeout: Double = 10,
        onEvent: @escaping @Sendable (UpEvent) -> Void
    ) throws {
        emit = onEvent
        role = .home
        home = options.openCode.target
        health = nil
        homeFollowing = wiring.map { HomeFollowing(wiring: $0, home: options.openCode.target, timeout: healthTimeout) }
        engine = try Engine(home: options) { onEvent(.engine($0)) }
    }

    /// `home up`'s health test: `HomeHealth` against OpenCode's home port now, its result kept
    /// for `home status`; then OpenCode's events are followed (now if it passed, else once it does).
    public func checkHealth(timeout: Double, credentials: OpenCodeCredentials) {
        guard let home else { return }
        let passed = PassedReport()
        engine.recordHealth(
            HomeHealth(home: home, timeout: timeout, credentials: credentials).run { event in
                if case .health(.homePassed(let report, _, _)) = event { passed.report = report }
                emit(event)
            })
        homeFollowing?.start(passed: passed.report, engine: engine)
    }

    /// Answers `octunnel tunnel status` (`home status`) from the engine's loop; a socket it
    /// cannot serve is a warning, and the engine runs without.
    public func serveStatus(at endpoint: StatusEndpoint) {
        do {
            try engine.serveStatus(at: endpoint)
        } catch {
            let unseen =
                role == .tunnel
                ? "`octunnel tunnel status` will not see this tunnel"
                : "`octunnel home status` will not see this home side"
            emit(.engine(.warning("\(error); \(unseen)")))
        }
    }

    /// Handles SIGINT and SIGTERM, then runs until they come (returns) or a failure retrying
    /// cannot fix (emitted as `.failed`, then thrown). The notifications' programs still running
    /// then are ended and reaped before it returns.
    public func run() throws {
        engine.handleSignals()
        defer {
            health?.stop()
            homeFollowing?.stop()
        }
        do {
            try engine.run()
        } catch {
            emit(.failed(asFailure(error)))
            throw error
        }
    }
}

/// OpenCode's forwarded port, learnt from its first `forwarding` event, and the engine itself
/// (its event handler is made before it), for the health test to ask why a forward was refused.
final class OpenCodeForwardBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int?
    private weak var held: Engine?

    var port: Int? {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }

    var engine: Engine? {
        get { lock.lock(); defer { lock.unlock() }; return held }
        set { lock.lock(); held = newValue; lock.unlock() }
    }
}

/// The report of a home health test that passed, kept from its event.
private final class PassedReport: @unchecked Sendable {
    var report: HealthReport?
}
