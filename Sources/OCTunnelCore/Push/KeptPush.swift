import Foundation

/// A moment the phone push holds until ntfy has taken it, with an id of its own that the message
/// carries as a tag (`octunnel-ID`, 8 hex digits). A try whose answer never came (a timeout, a
/// cut after the request went out) may have reached ntfy all the same; the next try first reads
/// the topic for that id and sends nothing when it is there, so the phone never shows the moment
/// twice and the buttons of the copy it has still answer.
public struct KeptPush: Sendable, Equatable {
    public let moment: AgentMoment
    public let id: String
    /// When the first try began; nil before any.
    public var tried: Date?

    /// What one try did.
    public enum Outcome: Sendable, Equatable {
        /// Published now.
        case sent
        /// An earlier try had reached ntfy after all: nothing sent.
        case foundOnTopic
    }

    public init(_ moment: AgentMoment) {
        self.moment = moment
        var generator = SystemRandomNumberGenerator()
        id = NonceBook.hex((0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The tag the message carries.
    public var tag: String { "octunnel-" + id }
}
