import Foundation

/// Debian's `sslh` (its default, forking `/usr/sbin/sslh`) in front of an sshd, as on a VPS
/// that takes SSH on a shared port: it listens on `address:port` and hands every SSH
/// connection to `sshd` on `target`, so sshd's peer is sslh on loopback, which acknowledges
/// everything whether or not the real client is still there. Runs in the foreground (`-f`)
/// through `launcher` (e.g. `ip netns exec VPS`); `stop()` (or deinit) ends it and the child it
/// forked for each connection (by parent pid: they outlive a client whose link died).
public final class SSLHRelay: @unchecked Sendable {
    public static let binary = "/usr/sbin/sslh"
    public let address: String
    public let port: Int
    private let process: RunningProcess
    private let lock = NSLock()
    private var stopped = false

    /// Starts sslh and waits (polling `ss` in the namespace every 50 ms, up to 10 s) until it
    /// listens. Throws when sslh is not installed or never listens.
    public init(address: String, target: String, launcher: [String]) throws {
        guard access(Self.binary, X_OK) == 0 else { throw HarnessError("sslh is not installed (apt-get install sslh)") }
        self.address = address
        port = freePort()
        let command = launcher + [Self.binary, "-f", "-n", "-p", "\(address):\(port)", "--ssh", target]
        process = try RunningProcess(command[0], Array(command.dropFirst()))
        let ss: String =
            ["/usr/bin/ss", "/bin/ss", "/usr/sbin/ss"].first(where: { (path: String) in access(path, X_OK) == 0 })
            ?? "ss"
        let listening = waitUntil(timeout: 10) {
            guard process.isRunning else { return true }
            let probe = launcher + [ss, "-ltnH", "sport", "=", ":\(port)"]
            let result = try? run(probe[0], Array(probe.dropFirst()))
            if result?.stdout.contains(":\(port)") == true { return true }
            usleep(50_000)
            return false
        }
        guard listening, process.isRunning else {
            stop()
            throw HarnessError("sslh did not listen on \(address):\(port): \(process.stderrText)")
        }
    }

    /// `user@address:port`, the target clients use instead of sshd's own.
    public func target(user: String) -> String { "\(user)@\(address):\(port)" }

    /// What sslh logged (one line per connection it handed on).
    public var log: String { process.stderrText + process.stdout.joined(separator: "\n") }

    /// Ends sslh and its per-connection children; idempotent.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        // The children first, while sslh (which ignores SIGCHLD) still reaps them.
        let children = descendants(of: process.pid)
        for child in children { kill(child, SIGKILL) }
        _ = waitUntil(timeout: 5) { children.allSatisfy(Self.isGone) }
        process.signal(SIGKILL)
        _ = process.waitForExit(timeout: 5)
    }

    deinit { stop() }

    /// Whether `pid` has exited (gone, or a zombie nobody reaped yet).
    private static func isGone(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }
}
