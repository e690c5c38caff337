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
    /// Where the VPS listens for this forward (OpenCode's: `connection.remoteHost:remotePort`).
    public var remote: HostPort
    /// The forwards beside OpenCode's (`-R`, the app the agent builds), carried by the same session.
    public var additionalForwards: [Forward] = []
    /// This forward's place in the session's list (0: OpenCode's): the port-reclaim program's
    /// verbs name the listen of every other one (`PortReclaimProgram.command`).
    public var forwardIndex = 0

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
        remote = HostPort(host: connection.remoteHost, port: connection.remotePort)
    }

    /// The OpenCode forward: the VPS's `remote` to `home` here.
    public var openCodeForward: Forward { Forward(direction: .remote, listen: remote, target: home, isOpenCode: true) }

    /// Every forward of the session, OpenCode's first.
    public var forwards: [Forward] { [openCodeForward] + additionalForwards }

    /// These options for the `index`th of `forwards`: its VPS listen and home address.
    func one(_ index: Int) -> HomeForwardOptions {
        let forward = forwards[index]
        var options = self
        options.remote = forward.listen
        options.home = forward.target
        options.forwardIndex = index
        options.additionalForwards = []
        return options
    }

    /// Throws `badForward` (exit 64) unless the forwards can go together (`Forward.validate`).
    public func checkForwards(allowLAN: Bool) throws(OCTunnelError) {
        do {
            try Forward.validate(forwards, allowLAN: allowLAN || !Sockets.isLoopback(remote.host))
        } catch {
            throw .badForward(reason: error.message)
        }
    }
}

/// `home up`'s engine: a `RemoteForward` per forward (OpenCode's, then `-R`'s: the VPS listens;
/// each connection it forwards is carried to that port on this machine) driven over one SSH
/// session by the same `SessionDriver` and `EventLoop` as `tunnel up`'s `TunnelEngine`. A
/// forward the VPS forbids stops alone, said as a warning; the run ends (exit 77) only when
/// the VPS forbids every one.
public final class HomeEngine: @unchecked Sendable {
    public let options: HomeForwardOptions
    private let loop: EventLoop
    private let forwards: [RemoteForward]
    private let driver: SessionDriver

    public init(options: HomeForwardOptions, onEvent: @escaping @Sendable (EngineEvent) -> Void) throws(OCTunnelError) {
        self.options = options
        do {
            loop = try EventLoop()
        } catch {
            throw .sshFailure(host: options.connection.target.host, port: options.connection.target.port, detail: error.description)
        }
        let loop = self.loop
        let all = ForwardList()
        forwards = try options.forwards.indices.map { (index) throws(OCTunnelError) -> RemoteForward in
            try RemoteForward(options: options.one(index), emit: onEvent, forbidden: { error in
                // The others serve on; the run ends once the VPS forbids every forward.
                if all.forwards.allSatisfy({ $0.fatal != nil }) { loop.requestStop() } else { onEvent(.warning(error.localizedDescription)) }
            })
        }
        all.forwards = forwards
        driver = SessionDriver(settings: options.connection, keepalive: options.keepalive,
                               exitOnFirstFailure: options.exitOnFirstFailure, loop: loop, forwards: forwards, emit: onEvent)
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
        if forwards.allSatisfy({ $0.fatal != nil }), let fatal = forwards.first?.fatal { throw fatal }
    }
}

/// The engine's forwards, for the closure each one calls when the VPS forbids it (made before them).
private final class ForwardList {
    var forwards: [RemoteForward] = []
}
