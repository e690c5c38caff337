/// `home up` around its engine: the health test of the home port before listening, the status
/// socket, and every event handed to one `onEvent`.
public struct HomeUp: Sendable {
    public let engine: HomeEngine
    private let emit: @Sendable (UpEvent) -> Void

    public init(options: HomeForwardOptions, onEvent: @escaping @Sendable (UpEvent) -> Void) throws(OCTunnelError) {
        emit = onEvent
        engine = try HomeEngine(options: options) { onEvent(.engine($0)) }
    }

    /// Runs `HomeHealth` against the home port now and keeps its result for `home status`.
    public func checkHealth(timeout: Double, credentials: OpenCodeCredentials) {
        let health = HomeHealth(home: engine.options.home, timeout: timeout, credentials: credentials).run(emit: emit)
        engine.recordHealth(health)
    }

    /// Answers `octunnel home status` from the engine's loop; a socket it cannot serve is a
    /// warning, and the home side runs without.
    public func serveStatus(at endpoint: StatusEndpoint) {
        engine.serveStatus(at: endpoint, unseen: "`octunnel home status` will not see this home side", emit: emit)
    }

    /// Runs until Ctrl-C or SIGTERM (returns) or a failure retrying cannot fix, a VPS that
    /// forbids listening included (emitted as `.failed`, then thrown).
    public func run() throws(OCTunnelError) {
        try engine.run(emit: emit)
    }
}
