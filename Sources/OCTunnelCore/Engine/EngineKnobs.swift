import Foundation

/// Two settings the test suite uses to reproduce engine faults on demand, read once from the
/// environment; unset (as in every normal run) they leave the engine as it ships.
/// - `OCTUNNEL_SEND_HIGH_WATER=BYTES`: the session's send buffer high-water mark (default
///   256 KiB). A tiny one makes streams hold bytes back after nearly every write, the case in
///   which issue 29's wake-up was missed.
/// - `OCTUNNEL_FAULT=missed-wakeup`: brings that missed wake-up back, so a stream really sticks
///   and the stall watch must find it and move it again (its test).
enum EngineKnobs {
    static let defaultSendHighWater = 256 * 1024

    /// The send buffer's high-water mark (see `LiveSession.highWater`).
    static let sendHighWater: Int = {
        guard let text = ProcessInfo.processInfo.environment["OCTUNNEL_SEND_HIGH_WATER"],
              let value = Int(text), value > 0 else { return defaultSendHighWater }
        return value
    }()

    /// Whether streams whose held bytes could move are left to the stall watch.
    static let missWakeups = ProcessInfo.processInfo.environment["OCTUNNEL_FAULT"] == "missed-wakeup"
}
