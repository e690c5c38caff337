import Foundation

/// Two settings the test suite uses to reproduce engine faults on demand, read once from the
/// environment; unset (as in every normal run) they leave the engine as it ships.
/// - `OCTUNNEL_SEND_HIGH_WATER=BYTES`: the session's send buffer high-water mark (default
///   256 KiB). A tiny one makes streams hold bytes back after nearly every write, the case in
///   which issue 29's wake-up was missed.
/// - `OCTUNNEL_FAULT=stuck-upstream`: bytes a stream holds for the channel move only when the
///   stall watch moves the stream again, so a stream really sticks and the watch must find it
///   (its test: nothing else ever makes the watch fire).
enum EngineKnobs {
    static let defaultSendHighWater = 256 * 1024

    /// The send buffer's high-water mark (see `LiveSession.highWater`).
    static let sendHighWater: Int = {
        guard let text = ProcessInfo.processInfo.environment["OCTUNNEL_SEND_HIGH_WATER"],
            let value = Int(text), value > 0
        else { return defaultSendHighWater }
        return value
    }()

    /// Whether bytes held for the channel are left to the stall watch.
    static let stuckUpstream = ProcessInfo.processInfo.environment["OCTUNNEL_FAULT"] == "stuck-upstream"
}
