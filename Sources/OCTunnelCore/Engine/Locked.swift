import Foundation

/// A value one thread writes and another reads, under a lock: the last health test's result
/// (written by the thread that ran it) and the last three notifications (written by the event
/// follower), read on the loop thread when `status` asks.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }

    /// Changes the value in place, under the lock.
    func update(_ change: (inout Value) -> Void) {
        lock.lock(); defer { lock.unlock() }
        change(&stored)
    }
}

extension NSCondition {
    /// Runs `change` under the lock, then wakes every thread waiting for it: the one way a value
    /// guarded by a condition changes.
    func changing(_ change: () -> Void) {
        self.lock()
        defer { self.unlock() }
        change()
        self.broadcast()
    }
}
