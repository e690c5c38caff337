import Foundation

/// The last health test's result: written by the thread that ran the test, read on the loop
/// thread when `status` asks.
final class HealthRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var last: StatusSnapshot.Health?

    var value: StatusSnapshot.Health? {
        get { lock.lock(); defer { lock.unlock() }; return last }
        set { lock.lock(); last = newValue; lock.unlock() }
    }
}

/// The last three notifications: written by the event follower's thread, read on the loop
/// thread when `status` asks.
final class NotificationRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var last: [StatusSnapshot.Notified] = []

    var value: [StatusSnapshot.Notified] {
        lock.lock(); defer { lock.unlock() }
        return last
    }

    func add(_ notified: StatusSnapshot.Notified) {
        lock.lock(); defer { lock.unlock() }
        last = Array((last + [notified]).suffix(3))
    }
}
