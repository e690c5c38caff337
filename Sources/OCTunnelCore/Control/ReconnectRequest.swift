import Foundation

/// `tunnel reconnect` / `home reconnect`: finds the running process through its status socket
/// (this user's, answering), sends it SIGUSR1, and watches `status` until a new session is up.
/// Nothing running is `notRunning` (exit 3), as for `status`.
public struct ReconnectRequest: Sendable {
    public let client: StatusClient

    public init(endpoint: StatusEndpoint) { client = StatusClient(endpoint: endpoint) }

    /// Asks the process to reconnect; returns its snapshot from just before.
    public func send() throws -> StatusSnapshot {
        let (snapshot, peer) = try client.exchange()
        // The kernel's word for who answered, not the pid the answer claims (one out of range: none).
        let pid = peer ?? Int32(exactly: snapshot.pid) ?? 0
        do {
            guard pid > 0 else { throw Errno.noSuchProcess }
            try Syscall.kill(pid, .reconnect)
        } catch {
            throw StatusError.statusNotAnswered(
                path: client.endpoint.path, reason: "cannot signal pid \(pid): \(error)")
        }
        return snapshot
    }

    /// Asks the process answering at `endpoint`, if one runs, to reconnect (without waiting);
    /// its pid, or nil when none runs or it cannot be asked. A rotated key: `tunnel up` signs in
    /// with the new key at once, making its new session before the old one breaks.
    public static func askIfRunning(at endpoint: StatusEndpoint) -> Int? {
        guard let before = try? ReconnectRequest(endpoint: endpoint).send() else { return nil }
        return before.pid
    }

    /// Polls `status` until a session newer than the one in `before` is up, for at most
    /// `timeout` seconds; returns that snapshot, or nil when none came up in time.
    public func waitForNewSession(after before: StatusSnapshot, timeout: Double) -> StatusSnapshot? {
        let deadline = MonotonicClock.now() + timeout
        var pause = 0.05
        while MonotonicClock.now() < deadline {
            if let now = try? client.query(), now.state == .connected,
                now.reconnects > before.reconnects || (before.state != .connected && now.connectedSince != nil)
            {
                return now
            }
            Thread.sleep(forTimeInterval: pause)
            pause = min(0.25, pause * 1.5)
        }
        return nil
    }
}
