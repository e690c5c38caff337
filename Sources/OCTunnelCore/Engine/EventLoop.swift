import Foundation

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
