import Foundation

/// The forwarded port, learnt from the first `forwarding` event, and the engine itself (its
/// event handler is made before it), for the health test to ask why a forward was refused.
final class EngineBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int?
    private weak var held: TunnelEngine?

    var port: Int? {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }

    var engine: TunnelEngine? {
        get { lock.lock(); defer { lock.unlock() }; return held }
        set { lock.lock(); held = newValue; lock.unlock() }
    }
}
