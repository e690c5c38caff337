import Foundation

// What tells the driver the network may have moved under the session, without a byte sent:
// the kernel's address and route changes (`NetworkWatcher`) and a sleep (`WakeDetector`). The
// driver hands either to `ReconnectState` as a roaming cause; `RoamingDecision` says what it means.

/// The routing socket as one more `PollOwner` of the loop: it only notes what the kernel
/// announced and says when a burst of changes has settled (250 ms after the last one, at most
/// 1 s after the first, as Tailscale debounces); the session driver decides what to do.
/// Idle it costs nothing: one descriptor in the poll, no timer until something changes.
final class NetworkWatcher: PollOwner {
    private let socket: OwnedDescriptor?
    static let quietFor = 0.25
    static let atMost = 1.0
    private var changes: [RoutingSocket.Change] = []
    private var firstAt: Double?
    private var lastAt: Double?
    private var readable = false

    /// Opens the system's routing socket; without one (refused), it never reports.
    init() { socket = RoutingSocket.open() }

    func register(in set: PollSet) {
        guard let socket else { return }
        set.watch(socket, events: .readable, owner: self, tag: 0)
        if let settle = settlesAt { set.wake(at: settle) }
    }

    func ready(tag: Int, events: PollEvents) { readable = true }

    private var settlesAt: Double? {
        guard let firstAt, let lastAt else { return nil }
        return min(lastAt + Self.quietFor, firstAt + Self.atMost)
    }

    /// Reads what arrived this round; once the burst has settled, returns it and when it began
    /// (then forgets it).
    func settled(now: Double) -> (changes: [RoutingSocket.Change], since: Double)? {
        if readable, let socket {
            readable = false
            let fresh = RoutingSocket.drain(socket)
            if !fresh.isEmpty {
                changes += fresh
                if firstAt == nil { firstAt = now }
                lastAt = now
            }
        }
        guard let at = settlesAt, let since = firstAt, now >= at else { return nil }
        defer { changes = []; firstAt = nil; lastAt = nil }
        return (changes, since)
    }

    /// A short text for a burst: "address 10.1.2.3 removed, route changed".
    static func summary(_ changes: [RoutingSocket.Change]) -> String {
        var parts: [String] = []
        for change in changes {
            let text: String
            switch change {
            case .addressAdded(let address): text = "address \(address) added"
            case .addressRemoved(let address): text = "address \(address) removed"
            case .routeChanged: text = "routes changed"
            case .linkChanged: text = "link changed"
            }
            if !parts.contains(text) { parts.append(text) }
        }
        if parts.count > 4 { parts = Array(parts.prefix(4)) + ["…"] }
        return parts.joined(separator: ", ")
    }
}

// MARK: - A sleep

/// Tells a wake from sleep at the top of a loop turn, from two clocks: the loop overslept (a
/// poll returned far later than the deadline it was given: what SIGSTOP/SIGCONT or a frozen
/// VM produce), or the suspend clock ran ahead of the monotonic one (a laptop's lid closed).
/// Pure: the driver passes the times in, tests pass their own.
struct WakeDetector {
    /// A poll that returns this much past its deadline was not merely late: the process slept.
    var oversleepThreshold: Double = 3
    /// Suspended time that grew by this much since the last turn is a sleep.
    var suspendThreshold: Double = 1
    private var expectedBy: Double = .infinity
    private var suspendedAtLastTurn: Double?

    /// The coming poll will return by `deadline` (monotonic) unless the process is stopped.
    mutating func expect(wakeBy deadline: Double) { expectedBy = deadline.isNaN ? .infinity : deadline }

    /// Seconds asleep, or nil, at the top of a turn at `now` with `suspended` as
    /// `MonotonicClock.suspended()` reads now.
    mutating func check(now: Double, suspended: Double) -> Double? {
        defer {
            suspendedAtLastTurn = suspended
            expectedBy = .infinity
        }
        if let before = suspendedAtLastTurn, suspended - before >= suspendThreshold { return suspended - before }
        let late = now - expectedBy
        if late.isFinite && late >= oversleepThreshold { return late }
        return nil
    }
}
