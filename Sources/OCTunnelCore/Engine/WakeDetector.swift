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
