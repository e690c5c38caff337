import Foundation

/// One message as ntfy's JSON publishing takes it (`POST /` with `{"topic", "title", "message",
/// "priority", "tags", "actions"}`, docs/publish.md "Publish as JSON"), with at most three
/// `http` actions: on a tap, ntfy's Android and iOS apps send `method` to `url` with `headers`
/// and `body` (POST and an empty body by default) and, with `clear`, dismiss the notification.
public struct NtfyMessage: Encodable, Sendable, Equatable {
    /// One `http` action button.
    public struct Action: Encodable, Sendable, Equatable {
        public var action = "http"
        public let label: String
        public let url: String
        public var method = "POST"
        public let headers: [String: String]?
        public let body: String
        public var clear = true

        public init(label: String, url: String, headers: [String: String]?, body: String) {
            (self.label, self.url, self.headers, self.body) = (label, url, headers, body)
        }
    }

    /// ntfy shows at most three actions.
    public static let actionLimit = 3

    public let topic: String
    public let title: String
    public let message: String
    public let priority: Int
    public let tags: [String]
    public let actions: [Action]?

    public init(
        topic: String, title: String, message: String, priority: Int = 3, tags: [String] = [], actions: [Action] = []
    ) {
        (self.topic, self.title, self.message, self.priority, self.tags) = (topic, title, message, priority, tags)
        self.actions = actions.isEmpty ? nil : Array(actions.prefix(Self.actionLimit))
    }

    /// The JSON body, with each of `secrets` taken out of every text first and checked out of
    /// the encoded body after (a secret's JSON-escaped form would otherwise pass).
    public func body(redacting secrets: [String]) -> [UInt8] {
        let secrets = secrets.filter { !$0.isEmpty }
        func clean(_ text: String) -> String { OutsideText.redacting(text, secrets: secrets) }
        let cleaned = NtfyMessage(
            topic: topic, title: clean(title), message: clean(message), priority: priority, tags: tags,
            actions: (actions ?? []).map {
                Action(label: clean($0.label), url: $0.url, headers: $0.headers, body: $0.body)
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(cleaned) else { return [] }
        var text = String(decoding: data, as: UTF8.self)
        for secret in secrets {
            guard let escaped = try? String(decoding: encoder.encode(secret), as: UTF8.self).dropFirst().dropLast()
            else { continue }
            text = OutsideText.redacting(text, secrets: [String(escaped)])
        }
        return Array(text.utf8)
    }
}
