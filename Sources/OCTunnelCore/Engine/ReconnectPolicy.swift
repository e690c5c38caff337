import Foundation

/// Exponential backoff with jitter: 1 s doubling to 30 s, back to 1 s after a minute of uptime.
public struct ReconnectPolicy: Sendable {
    public var initial: Double = 1
    public var maximum: Double = 30
    public var jitter: Double = 0.2
    public var stableAfter: Double = 60
    private(set) var failures = 0

    public init() {}

    /// The delay before the next attempt; `uptime` is how long the session that just died lived.
    public mutating func nextDelay(afterUptime uptime: Double?, random: Double = Double.random(in: -1...1)) -> Double {
        if let uptime, uptime >= stableAfter { failures = 0 }
        let base = min(maximum, initial * pow(2, Double(failures)))
        failures += 1
        return max(0.1, min(maximum, base * (1 + jitter * random)))
    }

    /// The network changed (or the machine woke): what failed before says nothing about the
    /// new path, so the backoff starts over.
    public mutating func networkChanged() { failures = 0 }
}
