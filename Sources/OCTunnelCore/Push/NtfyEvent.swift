import Foundation

/// One line of ntfy's JSON stream (`GET /TOPIC/json`): `{"id","time","event","topic","message"?}`,
/// where `event` is `open` (the subscription started), `keepalive`, `message` or
/// `poll_request` (ntfy server/types.go `message`). Only what octunnel reads is decoded; a line
/// that is not such an object is nil (and skipped).
public struct NtfyEvent: Decodable, Sendable, Equatable {
    public let id: String
    public let time: Int64
    public let event: String
    public let topic: String?
    public let message: String?

    /// ntfy's ids are 12 characters of `A-Za-z0-9`; octunnel sends one back in `since=`, so one
    /// that is not such a short word is refused.
    static let idLimit = 64

    /// The event on `line`, or nil.
    public static func parse(_ line: String) -> NtfyEvent? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("{"), let event = try? JSONDecoder().decode(NtfyEvent.self, from: Data(trimmed.utf8))
        else { return nil }
        guard (1...idLimit).contains(event.id.utf8.count),
            event.id.utf8.allSatisfy({ PushURL.isTopic(String(UnicodeScalar($0))) })
        else {
            return nil
        }
        return event
    }

    /// Whether it carries a published message (a tap).
    public var isMessage: Bool { event == "message" }
}

/// A button's tap as it reaches the reply topic: the body the button's `http` action POSTs,
/// `octunnel1 REQUEST_ID NONCE SENDER`: the request it answers (route-safe), the nonce of the
/// answer (32 hex digits) and the sender's tag (8 hex digits: the `NonceBook` that issued it, so
/// that two ends reading one reply topic each pass over the other's taps quietly). A body without
/// the tag (`octunnel1 REQUEST_ID NONCE`) is checked as anyone's. Anything else is not a tap.
public struct PushTap: Sendable, Equatable {
    public static let prefix = "octunnel1"
    /// The length of a sender's tag, in hex digits.
    public static let senderDigits = 8

    public let requestID: String
    public let nonce: String
    /// The tag of the book that issued the nonce; nil in a body without one.
    public let sender: String?

    public init(requestID: String, nonce: String, sender: String? = nil) {
        (self.requestID, self.nonce, self.sender) = (requestID, nonce, sender)
    }

    /// The body a button sends.
    public var body: String { "\(Self.prefix) \(requestID) \(nonce)" + (sender.map { " " + $0 } ?? "") }

    /// The tap in a message's text; nil when it is not one.
    public static func parse(_ text: String) -> PushTap? {
        guard text.utf8.count <= 256 else { return nil }
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(
            separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 4, parts[0] == prefix, PendingPermission.isRouteSafe(String(parts[1])),
            NonceBook.bytes(hex: String(parts[2])) != nil
        else { return nil }
        let sender = parts.count == 4 ? String(parts[3]) : nil
        guard sender.map(isSender) ?? true else { return nil }
        return PushTap(requestID: String(parts[1]), nonce: String(parts[2]), sender: sender)
    }

    /// Whether `text` is a sender's tag: `senderDigits` lowercase hex digits.
    static func isSender(_ text: String) -> Bool {
        text.utf8.count == senderDigits
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
