import Foundation

// What OpenCode sends, as Codable types. Tolerant as OpenCode's clients are: a field absent in
// some version is optional, an unknown one is ignored, and a field of the wrong type reads as
// absent (`lenient`) rather than failing the whole answer. Sizes stay bounded by the callers
// (`HTTPLimits`, the lists' caps): decoding never keeps more than the body it was given.

extension KeyedDecodingContainer {
    /// The value at `key` when it is there and of type `T`; nil otherwise, never a throw.
    func lenient<T: Decodable>(_ key: Key, as type: T.Type = T.self) -> T? {
        (try? decodeIfPresent(T.self, forKey: key)) ?? nil
    }

    /// What the synthesized `init(from:)` calls for a `@LenientField`: `lenient(key)`, so a field
    /// absent, null or of another type is nil rather than a throw.
    func decode<T>(_ type: LenientField<T>.Type, forKey key: Key) throws -> LenientField<T> {
        LenientField(wrappedValue: lenient(key))
    }
}

/// A wire type's field read as `lenient` reads it: a struct whose fields all wear it decodes with
/// the synthesized `init(from:)`, and each field is nil when absent or of another type.
@propertyWrapper
struct LenientField<Value: Decodable>: Decodable {
    var wrappedValue: Value?
    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
    init(from decoder: Decoder) throws { wrappedValue = try? Value(from: decoder) }
}

/// A value that decodes when it can and is nil when it cannot: one bad entry of a list is
/// skipped (and counted), not the whole list lost.
public struct Lenient<Value: Decodable>: Decodable {
    public let value: Value?
    public init(from decoder: Decoder) throws { value = try? Value(from: decoder) }
}

/// A string where the far side may put anything: non-strings read as nil.
public struct LooseText: Decodable, Sendable, Equatable {
    public let text: String?
    public init(from decoder: Decoder) throws { text = try? decoder.singleValueContainer().decode(String.self) }
}

/// 2.x's envelope: `{"data": …}` (packages/protocol: every read answers so).
struct DataEnvelope<Payload: Decodable>: Decodable {
    let data: Payload
}

/// Decodes `body` as `T`; nil when it is not that shape.
func decodeWire<T: Decodable>(_ type: T.Type, _ body: [UInt8]) -> T? {
    try? JSONDecoder().decode(T.self, from: Data(body))
}

/// A tagged error body (2.x, Effect's `Schema.TaggedError`): `{"_tag": "UnauthorizedError", …}`.
struct TaggedErrorWire: Decodable {
    let tag: String?
    enum CodingKeys: String, CodingKey { case tag = "_tag" }
    init(from decoder: Decoder) throws { tag = try decoder.container(keyedBy: CodingKeys.self).lenient(.tag) }

    /// The tag of `body`, if it is a tagged error.
    static func tag(of body: [UInt8]) -> String? { decodeWire(Self.self, Array(body.prefix(65536)))?.tag }
}

/// A health answer: 1.x `/global/health` and 2.0.3's `/api/health` `{healthy, version}`; 2.x
/// `/api/info` and `/api/status` `{version, pid, urls?, …}` (packages/server/src/server-info.ts).
struct HealthWire: Decodable {
    @LenientField var version: String?
    @LenientField var healthy: Bool?
    @LenientField var pid: Double?
    @LenientField var urls: [LooseText]?
}

/// One pending permission in octunnel's words, whichever generation's field names it came in.
public struct PermissionRequestWire: Sendable, Equatable {
    public let id: String?
    public let sessionID: String?
    /// 1.x `permission`, 2.x `action`.
    public let kind: String?
    /// 1.x `patterns`, 2.x `resources`; an entry that is not a string is nil.
    public let patterns: [String?]
}

/// The names one generation gives a pending permission's fields (1.x `permission` and
/// `patterns`, 2.x `action` and `resources`): its dialect's whole say in reading the list.
protocol PermissionEntryKeys: CodingKey {
    static var id: Self { get }
    static var sessionID: Self { get }
    static var kind: Self { get }
    static var patterns: Self { get }
}

/// One entry of a pending-permission list under `Keys`' names, read leniently into octunnel's words.
struct PermissionEntryWire<Keys: PermissionEntryKeys>: Decodable {
    let wire: PermissionRequestWire
    init(from decoder: Decoder) throws {
        let object = try decoder.container(keyedBy: Keys.self)
        let patterns = object.lenient(.patterns, as: [LooseText].self) ?? []
        wire = PermissionRequestWire(
            id: object.lenient(.id), sessionID: object.lenient(.sessionID), kind: object.lenient(.kind),
            patterns: patterns.map(\.text))
    }
}

/// One question request, the same in both generations: `{id, sessionID, questions: [{question,
/// header, options: [{label, description}], multiple?}], tool?}` (1.x packages/opencode/src/question,
/// 2.x packages/schema/src/question.ts), on the event stream and in the pending lists.
public struct QuestionRequestWire: Decodable, Sendable, Equatable {
    public let id: String?
    public let sessionID: String?
    /// Nil when absent or not a list; an entry that is not a question is nil.
    public let questions: [Question?]?

    /// One question of a request.
    public struct Question: Decodable, Sendable, Equatable {
        public let question: String?
        public let header: String?
        public let multiple: Bool?
        /// Each option's label; nil for an option that has none (or is not an object).
        public let options: [String?]?

        enum CodingKeys: String, CodingKey { case question, header, multiple, options }
        struct Option: Decodable { let label: String? }
        public init(from decoder: Decoder) throws {
            let object = try decoder.container(keyedBy: CodingKeys.self)
            question = object.lenient(.question)
            header = object.lenient(.header)
            multiple = object.lenient(.multiple)
            options = object.lenient(.options, as: [Lenient<Option>].self)?.map { $0.value?.label }
        }
    }

    enum CodingKeys: String, CodingKey { case id, sessionID, questions }
    public init(from decoder: Decoder) throws {
        let object = try decoder.container(keyedBy: CodingKeys.self)
        id = object.lenient(.id)
        sessionID = object.lenient(.sessionID)
        questions = object.lenient(.questions, as: [Lenient<Question>].self)?.map(\.value)
    }
}

/// A session's title: 1.x `GET /session/:id` → `{title, …}`, 2.x's inside `{"data": …}`.
struct SessionInfoWire: Decodable {
    let title: String?
    enum CodingKeys: String, CodingKey { case title }
    init(from decoder: Decoder) throws { title = try decoder.container(keyedBy: CodingKeys.self).lenient(.title) }
}

/// A session's status: 1.x `{"type": "busy"|"idle"|"retry", …}` (or, in older events, the bare
/// string); nil type for anything else.
public struct SessionStatusWire: Decodable, Sendable {
    public let type: String?
    enum CodingKeys: String, CodingKey { case type }
    public init(from decoder: Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            type = text
        } else {
            type = (try? decoder.container(keyedBy: CodingKeys.self))?.lenient(.type)
        }
    }
}

/// A log position as JSON carries it: an integer from 0 to 2⁵³ (JSON's exact integers); nil otherwise.
struct LogSeq: Decodable {
    let value: Int?
    init(from decoder: Decoder) throws {
        let double = try? decoder.singleValueContainer().decode(Double.self)
        value = double.flatMap {
            $0.isFinite && $0 >= 0 && $0 <= Double(AgentSessionLog.seqLimit) && $0.rounded() == $0 ? Int($0) : nil
        }
    }
}
