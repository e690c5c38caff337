import OCTunnelLibc

/// Seconds on `CLOCK_MONOTONIC`: the loop's one notion of time (never jumps with the wall clock).
enum MonotonicClock {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Seconds the machine has spent suspended since boot: the clock that counts suspend
    /// (`CLOCK_BOOTTIME`; `mach_continuous_time` on macOS) minus the one that does not
    /// (`CLOCK_MONOTONIC`; `mach_absolute_time`). It grows only across a sleep.
    static func suspended() -> Double { Platform.suspendedSeconds() }
}
