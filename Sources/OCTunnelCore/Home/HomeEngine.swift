/// Options of `home up`'s forward: where the VPS listens (`connection.remoteHost:remotePort`)
/// and where OpenCode listens on this machine.
public struct HomeForwardOptions: Sendable {
    public var connection: ConnectionSettings
    /// OpenCode on the home machine (`--home-host`, `--home-port`).
    public var home: HostPort
    public var keepalive: Double
    /// Answer a forwarded connection the home port cannot take with an HTTP 502 (`--no-http-errors` turns it off).
    public var httpErrors: Bool
    /// Seconds a connection to the home port may take.
    public var homeConnectTimeout: Double
    /// The authorized_keys line that allows this key to listen (`pubkey --restrict --listen`), for the exit-77 message.
    public var listenLine: String
    /// Whether a failure of the very first connection ends the run (a person is watching).
    public var exitOnFirstFailure: Bool

    public init(connection: ConnectionSettings, home: HostPort = HostPort(host: Defaults.homeHost, port: Defaults.homePort),
                keepalive: Double = Double(Defaults.keepaliveSeconds), httpErrors: Bool = true,
                homeConnectTimeout: Double = Double(Defaults.homeConnectTimeoutSeconds), listenLine: String = "", exitOnFirstFailure: Bool = true) {
        self.connection = connection
        self.home = home
        self.keepalive = keepalive
        self.httpErrors = httpErrors
        self.homeConnectTimeout = homeConnectTimeout
        self.listenLine = listenLine
        self.exitOnFirstFailure = exitOnFirstFailure
    }

    /// Where the VPS listens.
    public var remote: HostPort { HostPort(host: connection.remoteHost, port: connection.remotePort) }
}

/// `home up`'s engine: a `RemoteForward` (the VPS listens; each connection it forwards is
/// carried to OpenCode on this machine) driven over one SSH session by the same
/// `SessionDriver` and `EventLoop` as `tunnel up`'s `TunnelEngine`.
public final class HomeEngine: @unchecked Sendable {
    public let options: HomeForwardOptions
    private let loop: EventLoop
    private let forward: RemoteForward
    private let driver: SessionDriver

    public init(options: HomeForwardOptions, onEvent: @escaping @Sendable (EngineEvent) -> Void) throws(OCTunnelError) {
        self.options = options
        do {
            loop = try EventLoop()
        } catch {
            throw .sshFailure(host: options.connection.target.host, port: options.connection.target.port, detail: error.description)
        }
        let loop = self.loop
        forward = try RemoteForward(options: options, emit: onEvent, requestStop: { loop.requestStop() })
        driver = SessionDriver(settings: options.connection, keepalive: options.keepalive,
                               exitOnFirstFailure: options.exitOnFirstFailure, loop: loop, forwards: [forward], emit: onEvent)
    }

    /// Serves `home status` on the role's socket from the engine's own loop (Control/).
    public func serveStatus(at endpoint: StatusEndpoint) throws(StatusServerError) { try driver.serveStatus(at: endpoint) }

    /// Records the last health test of the home port, for `home status`.
    public func recordHealth(_ health: StatusSnapshot.Health) { driver.health.value = health }

    /// Asks the loop to stop cleanly (the listen is cancelled on the way out); safe from any thread.
    public func stop() { loop.requestStop() }

    /// Makes SIGINT/SIGTERM stop this engine (a second signal exits at once).
    public func handleSignals() { loop.handleSignals() }

    /// Runs until `stop()` or a signal (returns) or a failure retrying cannot fix (throws),
    /// including a VPS that forbids this key to listen.
    public func run() throws(OCTunnelError) {
        try driver.run()
        if let fatal = forward.fatal { throw fatal }
    }
}
