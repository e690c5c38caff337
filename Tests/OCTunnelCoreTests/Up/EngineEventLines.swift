import Foundation
import OCTunnelCore

/// The engine's events as their text, collected from any thread (the tests of a running `up`:
/// HomeFollowingTests, HomePushTests, HomeOnlyRunTests).
final class EngineEventLines: @unchecked Sendable {
    private let lock = NSLock()
    private var all: [String] = []

    /// Adds one event's text.
    func add(_ event: EngineEvent) { lock.lock(); all.append(event.text); lock.unlock() }

    /// Every text so far, in order.
    var text: [String] { lock.lock(); defer { lock.unlock() }; return all }
}
