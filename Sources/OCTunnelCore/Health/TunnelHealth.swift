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
    /// What starts after a pass (the event follower, its notifier, the pair port); nil: nothing.
    public var wiring: UpWiring?

    /// The test for the tunnel `options` describes.
    public init(options: TunnelOptions, timeout: Double, credentials: OpenCodeCredentials) {
        self.timeout = timeout
        self.credentials = credentials
        remote = options.openCode.target
        reverseCommand = options.reverseCommand(for: options.openCode)
        host = options.connection.target.host
        bind = options.openCode.listen.host
    }

    /// Starts the test against the forward's `localPort`; `engine` says why a forward was
    /// refused, and keeps the result for `status`.
    func start(localPort: Int, engine: Engine?, emit: @escaping @Sendable (HealthEvent) -> Void) {
        // After the session that just came up: what the follower streamed before is on an older one.
        let sessionSince = MonotonicClock.now()
        let thread = Thread {
            var check = HealthCheck(
                localPort: localPort, remote: remote, reverseCommand: reverseCommand, timeout: timeout,
                credentials: credentials)
            check.forwardRefusal = { engine?.lastForwardRefusal(0) }
            check.localHost = HealthCheck.address(forBind: bind)
            let event: HealthEvent
            do {
                event = .tunnelPassed(try check.run(), host: host, password: credentials.usedText)
            } catch {
                event = .tunnelFailed(asFailure(error))
            }
            engine?.recordHealth(event.record(checkedAt: Date()))
            emit(event)
            if case .tunnelPassed(let report, _, _) = event, let engine {
                wiring?.openCodeAnswered(
                    report, host: HealthCheck.address(forBind: bind), port: localPort, engine: engine,
                    sessionSince: sessionSince)
            }
        }
        thread.start()
    }

    /// Stops what the passes started (`UpWiring.stop`): `tunnel up` leaves no program behind.
    func stop() { wiring?.stop() }
}
