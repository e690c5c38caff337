import Foundation

/// The sessions a `SessionDriver` holds at once and what each is for. One is current: every
/// new connection goes to it. A planned reconnect (`tunnel reconnect`, SIGUSR1) makes the new
/// session current as soon as it is up, and the one it replaced drains: its streams stay on it,
/// pumped, with its keepalive and the stall watch, until they end, its path is gone (it fails),
/// or `drainLimit` passes; then it says goodbye and is freed. The set is the one place that
/// knows which sessions exist, so a session opened for another reason (a second one for a burst
/// of opens) is one more role here, not another variable in the driver.
struct SessionSet {
    /// How long a replaced session may keep streams that do not end (an event stream):
    /// it holds a socket and the VPS's session process, and was signed in with a key that may
    /// have been rotated away since.
    static let drainLimit = 300.0

    /// The session new connections go to; nil while none is up.
    private(set) var current: LiveSession?
    /// Replaced sessions whose streams have not all ended, oldest first.
    private(set) var draining: [LiveSession] = []

    /// How many sessions are live: 1 normally, 2 while a replaced one drains, 0 while none is up.
    var count: Int { (current == nil ? 0 : 1) + draining.count }

    /// `new` becomes current; the session it replaces starts draining at `now` and is returned.
    mutating func adopt(_ new: LiveSession, now: Double) -> LiveSession? {
        let replaced = current
        if let replaced {
            replaced.beginDraining(now: now)
            draining.append(replaced)
        }
        current = new
        return replaced
    }

    /// Forgets `live` (it has been freed).
    mutating func remove(_ live: LiveSession) {
        if current === live { current = nil }
        draining.removeAll { $0 === live }
    }

    /// The current session is gone while replaced ones still work: the newest of them heard from
    /// the VPS within a keepalive interval takes new connections again (a planned reconnect never
    /// leaves things worse than before it). One not heard for longer may share the path that failed.
    mutating func restoreDrained(now: Double) -> LiveSession? {
        guard current == nil, let newest = draining.last(where: { $0.isAlive && !$0.keepalive.isQuiet(now: now) })
        else { return nil }
        draining.removeAll { $0 === newest }
        newest.endDraining()
        current = newest
        return newest
    }

    /// Whether `live` has drained for longer than `drainLimit` at `now`.
    static func overdue(_ live: LiveSession, now: Double) -> Bool {
        guard let since = live.drainingSince else { return false }
        return now - since >= drainLimit
    }
}
