#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    static func suspended() -> Double {
#if os(Linux)
        var boot = timespec(), mono = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_MONOTONIC, &mono)
        return Double(boot.tv_sec - mono.tv_sec) + Double(boot.tv_nsec - mono.tv_nsec) / 1e9
#elseif canImport(Darwin)
        var base = mach_timebase_info_data_t()
        mach_timebase_info(&base)
        let ticks = Double(mach_continuous_time() &- mach_absolute_time())
        return ticks * Double(base.numer) / Double(base.denom) / 1e9
#else
        return 0
#endif
    }
}
