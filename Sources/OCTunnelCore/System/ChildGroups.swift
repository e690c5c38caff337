import OCTunnelLibc
import Foundation

/// The process groups of the children a caller runs (`ChildProcess.run(…, groups:)`), so that
/// all of them, and whatever they started, can be ended at once (`tunnel up` exiting while a
/// `--notify-command` runs). Safe from any thread.
final class ChildGroups: @unchecked Sendable {
    private let lock = NSLock()
    private var running = Set<pid_t>()
    private var ended = false

    /// How many run now.
    var count: Int {
        lock.lock(); defer { lock.unlock() }
        return running.count
    }

    /// Notes the group `leader` leads; false once `endAll` was called (the caller ends it).
    func add(_ leader: pid_t) -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard !ended else { return false }
        running.insert(leader)
        return true
    }

    /// Forgets `leader`'s group (reaped).
    func remove(_ leader: pid_t) {
        lock.lock(); defer { lock.unlock() }
        running.remove(leader)
    }

    /// Kills every group (SIGKILL to each), and every group added after.
    func endAll() {
        lock.lock(); defer { lock.unlock() }
        ended = true
        for leader in running { Self.killGroup(leader) }
    }

    /// `kill(-leader, SIGKILL)`: the whole group.
    static func killGroup(_ leader: pid_t) {
        _ = kill(-leader, SIGKILL)
    }
}
