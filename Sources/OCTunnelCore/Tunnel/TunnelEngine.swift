/// `tunnel up`'s engine: a `LocalForward` per forward (OpenCode's, then `-L`'s; a local
/// listener each, one `direct-tcpip` channel per client) driven over one SSH session by a `SessionDriver` on one `EventLoop` thread.
/// Idle, it sleeps in poll. The pieces are in Engine/ and Forward/; this is their facade.
public final class TunnelEngine: @unchecked Sendable {
    public let options: TunnelOptions
    private let loop: EventLoop
    private let forward: LocalForward
    private let additional: [LocalForward]
    private let driver: SessionDriver

    /// The port actually listened on (useful with --local-port 0).
    public var localPort: Int { forward.localPort }

    /// The ports the additional forwards listen on, in their order.
    public var additionalPorts: [Int] { additional.map(\.localPort) }

    /// Why the VPS last refused the `index`th additional forward, if it has; safe from any thread.
    public func lastForwardRefusal(additional index: Int) -> String? { additional[index].lastForwardRefusal }

    /// Why the VPS last refused a forward (e.g. "administratively prohibited"), if it has;
    /// safe from any thread, so a health test can name the refusal instead of "nothing listens".
    public var lastForwardRefusal: String? { forward.lastForwardRefusal }

    /// Binds the local listener now, so a busy port fails before anything else happens.
    public init(options: TunnelOptions, onEvent: @escaping @Sendable (EngineEvent) -> Void) throws(OCTunnelError) {
        self.options = options
        forward = try LocalForward(options: options, emit: onEvent)
        additional = try options.additionalForwards.map { (forward) throws(OCTunnelError) -> LocalForward in
            try LocalForward(options: options, forward: forward, emit: onEvent)
        }
        do {
            loop = try EventLoop()
        } catch {
            throw .cannotListen(bind: options.bind, port: options.localPort, reason: error.description)
        }
        driver = SessionDriver(settings: options.connection, keepalive: options.keepalive,
                               exitOnFirstFailure: options.exitOnFirstFailure, waitsOutPenalty: options.waitsOutPenalty,
                               loop: loop, forwards: [forward] + additional, emit: onEvent)
    }

    /// Answers `octunnel tunnel status` at `endpoint` from the loop (call before `run()`, on
    /// its thread). Throws when it cannot; the tunnel runs as well without.
    public func serveStatus(at endpoint: StatusEndpoint) throws(StatusServerError) { try driver.serveStatus(at: endpoint) }

    /// Keeps the last health test for `status`; safe from any thread.
    public func recordHealth(_ health: StatusSnapshot.Health) { driver.health.value = health }

    /// Asks the loop to stop cleanly; safe from any thread.
    public func stop() { loop.requestStop() }

    /// Makes SIGINT/SIGTERM stop this engine (a second signal exits at once).
    public func handleSignals() { loop.handleSignals() }

    /// Runs until `stop()` or a signal (returns) or a failure retrying cannot fix (throws).
    public func run() throws(OCTunnelError) { try driver.run() }
}
