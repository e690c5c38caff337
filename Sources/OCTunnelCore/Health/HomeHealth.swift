import Foundation

/// `home up`'s health test straight against the home port, before listening: says whether
/// OpenCode runs here, never fatal (it may be started later; forwarded connections get a 502
/// meanwhile).
public struct HomeHealth: Sendable {
    /// OpenCode on this machine (`--home-host:--home-port`).
    public let home: HostPort
    public let timeout: Double
    public let credentials: OpenCodeCredentials

    /// Runs the test, emits how it went, and returns the result for `home status`.
    @discardableResult
    public func run(emit: (UpEvent) -> Void) -> StatusSnapshot.Health {
        do throws(SocketFailure) {
            try Sockets.connect(host: home.host, port: home.port, timeout: min(timeout, 5)).close()
        } catch {
            let reason: String
            if case .refused = error {
                reason = "connection refused"
            } else {
                reason = error.failure.localizedDescription
            }
            emit(.engine(.homeUnreachable(target: home, reason: reason)))
            return .init(ok: false, version: nil, checkedAt: Date(), detail: "nothing listens on \(home): \(reason)")
        }
        var check = HealthCheck(
            localPort: home.port, remote: home, reverseCommand: "", timeout: timeout, credentials: credentials)
        check.localHost = home.host
        let event: HealthEvent
        do {
            event = .homePassed(try check.run(), home: home, password: credentials.usedText)
        } catch {
            event = .homeFailed(asFailure(error), home: home)
        }
        emit(.health(event))
        return event.record(checkedAt: Date())
    }
}
