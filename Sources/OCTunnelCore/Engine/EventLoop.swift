import Foundation

// How the loop waits: the wake-up pipe, and the one poll a round makes over what it registered
// (`PollSet`: descriptors, their owners, the nearest timer).

/// The loop's one thread of control: a wake-up pipe (stop requests, signals, the connector
/// thread finishing) and one poll per round over whatever the round registered in its `PollSet`.
/// Idle, it sleeps in poll until the nearest timer.
final class EventLoop {
    private let wakeRead: OwnedDescriptor
    /// The pipe's write end: `stop()` and the signal handlers write to it.
    private let wakeWrite: OwnedDescriptor
    /// The set the current round is built in.
    let pollSet = PollSet()
    private(set) var stopRequested = false
    /// SIGUSR1 asked for a reconnect; `takeReconnectRequest` hands it over once.
    private var reconnectRequested = false

    /// Makes the wake-up pipe (non-blocking, close-on-exec); throws `pipe`'s errno.
    init() throws(SystemError) {
        (wakeRead, wakeWrite) = try Syscall.pipe(nonBlocking: true)
    }

    /// Asks the loop to stop cleanly; safe from any thread.
    func requestStop() { poke(.stop) }

    /// Asks the loop to reconnect, as SIGUSR1 does (make before break); safe from any thread.
    func requestReconnect() { poke(.reconnect) }

    /// Wakes the loop from another thread without asking it to stop (e.g. a result is ready).
    func wakeUp() { poke(.look) }

    private func poke(_ reason: LoopWake) {
        var byte = reason.rawValue
        wakeWrite.write(&byte, 1)
    }

    /// Whether a reconnect was asked for (SIGUSR1) since the last call.
    func takeReconnectRequest() -> Bool {
        defer { reconnectRequested = false }
        return reconnectRequested
    }

    /// Makes SIGINT/SIGTERM request a stop (a second signal exits at once).
    func handleSignals() { SignalHandling.install(wake: wakeWrite) }

    /// Polls the round's set (plus the wake pipe) and tells the owners what is ready; then
    /// empties nothing: the next round resets the set. Throws poll's errno.
    func poll(now: Double) throws(SystemError) {
        let woken = try pollSet.poll(now: now, wake: wakeRead)
        if woken { drainWakePipe() }
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = wakeRead.read(&buffer, buffer.count)
            if count <= 0 { break }
            if buffer[..<count].contains(LoopWake.stop.rawValue) { stopRequested = true }
            if buffer[..<count].contains(LoopWake.reconnect.rawValue) { reconnectRequested = true }
        }
    }
}

// MARK: - What one round polls

/// Whoever registered a descriptor in a `PollSet`, told when it polled ready.
protocol PollOwner: AnyObject {
    /// `tag` is what the owner registered the descriptor with; `events` are poll's `revents`.
    func ready(tag: Int, events: PollEvents)
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

    /// Polls `descriptor` for `events`; `owner.ready(tag:events:)` hears the result.
    func watch(_ descriptor: OwnedDescriptor, events: PollEvents, owner: PollOwner, tag: Int) {
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
        fds[0] = pollfd(wake, events: .readable)
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
            entry.owner.value.ready(tag: entry.tag, events: fds[index].found)
        }
        return fds[0].revents != 0
    }
}

/// The loop, carried to another thread only to wake it (the connector's, the service
/// follower's): its pipe write is thread-safe.
struct UncheckedLoop: @unchecked Sendable {
    let loop: EventLoop
}
