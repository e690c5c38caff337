/// `tunnel up` around its engine: the health test through the tunnel after each connect, the
/// status socket, and every event (the engine's, the health test's, the failure that ends the
/// run) handed to one `onEvent`.
public struct TunnelUp: Sendable {
    public let engine: TunnelEngine
    private let emit: @Sendable (UpEvent) -> Void

    /// The warning for a `--bind` that is not loopback, or nil.
    public static func exposureWarning(bind: String) -> EngineEvent? {
        guard !Sockets.isLoopback(bind) else { return nil }
        return .warning("listening on \(bind): anyone who can reach this machine on that network can use the tunnel")
    }

    /// Binds the local port now (69 if busy). `health` (nil: `--no-health`) runs on the first
    /// `forwarding` and after every later `connected`.
    public init(options: TunnelOptions, health: TunnelHealth?, onEvent: @escaping @Sendable (UpEvent) -> Void) throws(OCTunnelError) {
        emit = onEvent
        let box = EngineBox()
        let healthEvent: @Sendable (HealthEvent) -> Void = { onEvent(.health($0)) }
        engine = try TunnelEngine(options: options) { event in
            onEvent(.engine(event))
            guard let health else { return }
            if case .connected = event, let port = box.port { health.start(localPort: port, engine: box.engine, emit: healthEvent) }
            // OpenCode's forward only: the others are not OpenCode (`tunnel check` proves them).
            if case .forwarding(let local, _, _, true) = event {
                box.port = local.port
                health.start(localPort: local.port, engine: box.engine, emit: healthEvent)
            }
        }
        box.engine = engine
    }

    /// Answers `octunnel tunnel status` from the engine's loop; a socket it cannot serve is a
    /// warning, and the tunnel runs without.
    public func serveStatus(at endpoint: StatusEndpoint) {
        engine.serveStatus(at: endpoint, unseen: "`octunnel tunnel status` will not see this tunnel", emit: emit)
    }

    /// Runs until Ctrl-C or SIGTERM (returns) or a failure retrying cannot fix (emitted as
    /// `.failed`, then thrown).
    public func run() throws(OCTunnelError) {
        try engine.run(emit: emit)
    }
}
