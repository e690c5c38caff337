import Foundation

/// What `tunnel reconnect` / `home reconnect` came to.
public enum ReconnectOutcome: Sendable, Equatable {
    /// Asked (`wait` 0): the process of this pid was signalled.
    case asked(pid: Int)
    /// A new session came up after `seconds`; `reconnects` since the process started.
    case reconnected(pid: Int, seconds: Double, reconnects: Int)
}

extension ReconnectRequest {
    /// The whole flow: ask (`onAsked` is told the pid at once), then with `wait` > 0 watch
    /// `status` for up to `wait` seconds until a new session is up. No new session in time is
    /// `statusNotAnswered` naming `status` as the way to see why; nothing running is `notRunning`.
    public func run(wait: Int, role: Role, onAsked: (Int) -> Void) throws -> ReconnectOutcome {
        let startedAt = Date()
        let before = try send()
        onAsked(before.pid)
        guard wait > 0 else { return .asked(pid: before.pid) }
        guard let after = waitForNewSession(after: before, timeout: Double(wait)) else {
            throw StatusError.statusNotAnswered(
                path: client.endpoint.path,
                reason:
                    "asked to reconnect, but no new session came up within \(wait) s; `octunnel \(role) status` says why"
            )
        }
        return .reconnected(pid: after.pid, seconds: Date().timeIntervalSince(startedAt), reconnects: after.reconnects)
    }
}
