import OCTunnelLibc
import Foundation

/// A stop a thread asleep in `poll` sees at once, with no tick: a pipe whose write end `signal()`
/// writes one byte to (from any thread); the sleeper polls the read end beside what it waits
/// for (`OwnedDescriptor.waitReadable(milliseconds:unless:)`). Stays signalled.
final class StopSignal: @unchecked Sendable {
    private let read: OwnedDescriptor
    private let write: OwnedDescriptor
    private let lock = NSLock()
    private var signalled = false

    init() throws(SystemError) {
        (read, write) = try Syscall.pipe(nonBlocking: true)
    }

    /// Wakes every wait on this stop, now and later.
    func signal() {
        lock.lock(); defer { lock.unlock() }
        guard !signalled else { return }
        signalled = true
        var byte: UInt8 = 1
        _ = Syscall.write(write.number, &byte, 1)
    }

    /// Whether `signal()` was called.
    var isSignalled: Bool {
        lock.lock(); defer { lock.unlock() }
        return signalled
    }

    /// The descriptor that polls readable once signalled.
    var descriptor: Int32 { read.number }
}

/// What a wait on a descriptor beside a stop came to.
enum StoppableWait {
    case readable
    case stopped
    case timedOut
}

extension OwnedDescriptor {
    /// Waits up to `milliseconds` (-1: for ever) for this descriptor to be readable (or at its
    /// end), or for `stop`; EINTR retried, poll's failure thrown. The stop wins a tie.
    func waitReadable(milliseconds: Int32, unless stop: StopSignal) throws(Errno) -> StoppableWait {
        var fds = [
            pollfd(fd: number, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stop.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            do {
                guard try Syscall.poll(&fds, timeout: milliseconds) > 0 else { return .timedOut }
            } catch {
                if error == .interrupted { continue }
                throw error
            }
            if fds[1].revents != 0 { return .stopped }
            return .readable
        }
    }
}
