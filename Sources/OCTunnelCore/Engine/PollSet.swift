import Foundation

/// Whoever registered a descriptor in a `PollSet`, told when it polled ready.
protocol PollOwner: AnyObject {
    /// `tag` is what the owner registered the descriptor with; `events` are poll's `revents`.
    func ready(tag: Int, events: Int16)
}

/// What one poll round watches and the latest time it must wake: built afresh each round by
/// the session driver and its forward, then handed to `EventLoop.poll`.
final class PollSet {
    /// Slot 0 is the loop's own wake-up pipe; owners[i] owns fds[i + 1].
    private var fds: [pollfd] = [pollfd()]
    private var owners: [(owner: Unowned, tag: Int)] = []
    private(set) var deadline = Double.infinity

    /// An owner held without a reference count: owners outlive the round, and this is paid
    /// per descriptor per round.
    struct Unowned {
        unowned(unsafe) let value: PollOwner
    }

    /// Empties the set for a new round, keeping its storage.
    func reset() {
        fds.removeSubrange(1...)
        owners.removeAll(keepingCapacity: true)
        deadline = .infinity
    }

    /// Polls `descriptor` for `events` (POLLIN / POLLOUT); `owner.ready(tag:events:)` hears the result.
    func watch(_ descriptor: OwnedDescriptor, events: Int32, owner: PollOwner, tag: Int) {
        fds.append(pollfd(descriptor, events: events))
        owners.append((Unowned(value: owner), tag))
    }

    /// Wakes no later than `time` (monotonic seconds).
    func wake(at time: Double) { deadline = min(deadline, time) }

    /// Does not sleep at all this round (work is already waiting).
    func wakeNow() { deadline = -.infinity }

    /// poll(2) over the set plus `wake`, with the set's deadline; calls the owners of ready
    /// descriptors. Whether `wake` is readable (false after EINTR); poll's failure is thrown.
    func poll(now: Double, wake: OwnedDescriptor) throws(SystemError) -> Bool {
        fds[0] = pollfd(wake, events: Int32(POLLIN))
        let timeout: Int32
        if deadline == .infinity {
            timeout = -1
        } else {
            timeout = Int32(max(0, min(60_000, ((deadline - now) * 1000).rounded(.up))))
        }
        let ready: Int32
        do {
            ready = try Syscall.poll(&fds, timeout: timeout)
        } catch {
            if error == .interrupted { return false }
            throw SystemError("poll", error)
        }
        guard ready > 0 else { return false }
        for index in 1..<fds.count where fds[index].revents != 0 {
            let entry = owners[index - 1]
            entry.owner.value.ready(tag: entry.tag, events: fds[index].revents)
        }
        return fds[0].revents != 0
    }
}
