import Foundation

// What tells the driver the network may have moved under the session, without a byte sent:
// the kernel's address and route changes (`NetworkWatcher`) and a sleep (`WakeDetector`). The
// driver hands either to `ReconnectState` as a roaming cause; `RoamingDecision` says what it means.

/// The routing socket as one more `PollOwner` of the loop: it only notes what the kernel
/// announced and says when a burst of changes has settled (`Burst`); the session driver decides
/// what to do. Idle it costs nothing: one descriptor in the poll, no timer until something changes.
final class NetworkWatcher: PollOwner {
    private let socket: OwnedDescriptor?
    static let quietFor = 0.25
    /// The quiet that settles a burst which removed the session's own address: the session is gone
    /// with it, nothing to wait for on its behalf; this only lets the rest of a move's announcements
    /// (the new address, the route: 3-9 ms apart in an strace) land before the next attempt, which
    /// without a route fails at once and waits for the next burst to settle.
    static let quietAfterOwnAddress = 0.03
    static let atMost = 1.0
    private var burst = Burst()
    private var readable = false

    /// Opens the system's routing socket; without one (refused), it never reports.
    init() { socket = RoutingSocket.open() }

    func register(in set: PollSet) {
        guard let socket else { return }
        set.watch(socket, events: .readable, owner: self, tag: 0)
        if let settle = burst.settlesAt { set.wake(at: settle) }
    }

    func ready(tag: Int, events: PollEvents) { readable = true }

    /// Reads what arrived this round; once the burst has settled, returns it and when it began
    /// (then forgets it). `ownAddress`: the live session's local address, asked only when a
    /// change removed an address; `nothingToKeep`: no session is up and no attempt runs.
    func settled(
        now: Double, ownAddress: () -> String?, nothingToKeep: Bool
    ) -> (changes: [RoutingSocket.Change], since: Double)? {
        if readable, let socket {
            readable = false
            burst.add(RoutingSocket.drain(socket), now: now, ownAddress: ownAddress)
        }
        burst.nothingToKeep = nothingToKeep
        return burst.take(now: now)
    }

    /// A burst of announcements and when it settles: 250 ms after the last one, at most 1 s after
    /// the first, as Tailscale debounces (it avoids reconnecting on every flap); 30 ms after the
    /// last once one removed the session's own address, or while there is nothing to keep (no
    /// session, no attempt: the change only cuts a retry's wait short). Pure: tests pass the time.
    struct Burst {
        private(set) var changes: [RoutingSocket.Change] = []
        private var firstAt: Double?
        private var lastAt: Double?
        /// Whether a change removed the session's own address.
        private(set) var removedOwn = false
        /// No session is up and no attempt runs (the driver says, each round).
        var nothingToKeep = false

        /// When the burst settles; nil while there is none.
        var settlesAt: Double? {
            guard let firstAt, let lastAt else { return nil }
            let quiet = removedOwn || nothingToKeep ? NetworkWatcher.quietAfterOwnAddress : NetworkWatcher.quietFor
            return min(lastAt + quiet, firstAt + NetworkWatcher.atMost)
        }

        /// Adds what arrived at `now`.
        mutating func add(_ fresh: [RoutingSocket.Change], now: Double, ownAddress: () -> String?) {
            guard !fresh.isEmpty else { return }
            changes += fresh
            if firstAt == nil { firstAt = now }
            lastAt = now
            if !removedOwn { removedOwn = Self.removes(ownAddress, in: fresh) }
        }

        /// The burst and when it began, once settled at `now` (then forgotten).
        mutating func take(now: Double) -> (changes: [RoutingSocket.Change], since: Double)? {
            guard let at = settlesAt, let since = firstAt, now >= at else { return nil }
            defer { self = Burst() }
            return (changes, since)
        }

        /// Whether `changes` remove `ownAddress()` (asked only when they remove any address).
        static func removes(_ ownAddress: () -> String?, in changes: [RoutingSocket.Change]) -> Bool {
            let removed = changes.compactMap { change -> String? in
                guard case .addressRemoved(let address) = change else { return nil }
                return RoamingDecision.unmapped(address)
            }
            guard !removed.isEmpty, let own = ownAddress() else { return false }
            return removed.contains(RoamingDecision.unmapped(own))
        }
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
