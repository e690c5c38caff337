import Foundation

/// One event of OpenCode's event stream in octunnel's words, whichever shape its version sends:
/// 2.x's `/api/event` (`{"id","type","data":{…},"durable"?}`), 1.x's `/event`
/// (`{"id","type","properties":{…}}`) and `/global/event` (`{"directory","payload":{"id","type","properties"}}`).
/// A generation whose stream says it otherwise translates into this (`OpenCodeDialect.event(data:)`).
public struct OpenCodeEvent: Sendable {
    public let type: String
    /// 2.x's `data`, 1.x's `properties`.
    public let fields: Fields
    /// `/global/event`'s project directory.
    public let directory: String?
    /// 2.x: a durable event's position in its session's log (`durable.seq`, packages/schema/src/event.ts).
    public var seq: Int?

    /// The event in `data` (one `data:` of the stream), in any of the shapes above; nil past 1 MiB or without a type.
    public init?(data: String) {
        guard data.utf8.count <= 1 << 20,
            let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(data.utf8)),
            let type = envelope.inner.type
        else { return nil }
        self.type = type
        fields = envelope.inner.data ?? envelope.inner.properties ?? Fields()
        directory = envelope.directory
        seq = envelope.inner.durable?.seq?.value
    }

    /// An event of `type` with `fields` as its JSON would carry them (tests, and a translating dialect).
    public init(type: String, fields: [String: Any], directory: String? = nil) {
        self.type = type
        let json = (try? JSONSerialization.data(withJSONObject: fields)) ?? Data("{}".utf8)
        self.fields = (try? JSONDecoder().decode(Fields.self, from: json)) ?? Fields()
        self.directory = directory
    }

    /// A string field, or one inside `info` / `part` (session.updated, message.part.updated).
    func string(_ key: Fields.Key) -> String? {
        fields.text[key] ?? fields.info?.text[key] ?? fields.part?.text[key]
    }

    /// The session the event is about (an empty id names none).
    var sessionID: String? {
        let id = string(.sessionID) ?? (type.hasPrefix("session.") ? fields.info?.text[.id] : nil)
        return id?.isEmpty == false ? id : nil
    }

    private struct Envelope: Decodable {
        let directory: String?
        let inner: Inner
        enum CodingKeys: String, CodingKey { case directory, payload }
        init(from decoder: Decoder) throws {
            let object = try decoder.container(keyedBy: CodingKeys.self)
            directory = object.lenient(.directory)
            inner = try object.lenient(.payload, as: Inner.self) ?? Inner(from: decoder)
        }
    }

    private struct Inner: Decodable {
        @LenientField var type: String?
        @LenientField var data: Fields?
        @LenientField var properties: Fields?
        @LenientField var durable: Durable?
    }

    private struct Durable: Decodable { let seq: LogSeq? }

    /// What an event's fields may carry that octunnel reads (packages/opencode/src/session/status.ts,
    /// session/index.ts, permission/, question/ in 1.x; packages/schema's events in 2.x). Every
    /// field is optional and read leniently: a field of another type is as if absent.
    public struct Fields: Decodable, Sendable {
        /// The names of the string fields kept.
        public enum Key: String, CodingKey, CaseIterable, Sendable {
            case id, sessionID, requestID, permissionID, directory, callID, title, parentID, reason
            case permission, action, type, message, pattern
        }
        /// The string fields present (of `Key`).
        public var text: [Key: String] = [:]
        /// `session.updated`'s `info`, `message.part.updated`'s `part`.
        public var info: Part?
        public var part: Part?
        /// `session.status`'s status: `{"type": …}` or a bare string.
        public var status: SessionStatusWire?
        /// `session.error`'s and `session.execution.failed`'s error.
        public var error: ErrorField?
        /// 1.x `patterns`, 2.x `resources`, older 1.x `pattern` as a list.
        public var patterns: [String]?
        public var resources: [String]?
        public var patternList: [String]?
        /// A question event's request, read as the pending lists read it.
        public var question: QuestionRequestWire?

        init() {}

        private enum Nested: String, CodingKey { case info, part, status, error, patterns, resources, pattern }

        public init(from decoder: Decoder) throws {
            let strings = try decoder.container(keyedBy: Key.self)
            for key in Key.allCases { text[key] = strings.lenient(key) }
            let object = try decoder.container(keyedBy: Nested.self)
            info = object.lenient(.info)
            part = object.lenient(.part)
            status = object.lenient(.status)
            error = object.lenient(.error)
            patterns = object.lenient(.patterns)
            resources = object.lenient(.resources)
            patternList = object.lenient(.pattern)
            question = try? QuestionRequestWire(from: decoder)
        }

        /// `info` or `part`: the strings octunnel reads of it, and a tool part's state.
        public struct Part: Decodable, Sendable {
            public var text: [Key: String] = [:]
            /// A tool part's `state.status` ("pending", "running", "completed", "error").
            public var stateStatus: String?
            private enum Nested: String, CodingKey { case state, status }
            public init(from decoder: Decoder) throws {
                let strings = try decoder.container(keyedBy: Key.self)
                for key in Key.allCases { text[key] = strings.lenient(key) }
                let state = try? decoder.container(keyedBy: Nested.self).nestedContainer(
                    keyedBy: Nested.self, forKey: .state)
                stateStatus = state?.lenient(.status)
            }
        }

        /// `{name, message?, data: {message}}`.
        public struct ErrorField: Decodable, Sendable {
            public let name: String?
            public let message: String?
            public let dataMessage: String?
            private enum Keys: String, CodingKey { case name, message, data }
            public init(from decoder: Decoder) throws {
                let object = try decoder.container(keyedBy: Keys.self)
                name = object.lenient(.name)
                message = object.lenient(.message)
                dataMessage = (try? object.nestedContainer(keyedBy: Keys.self, forKey: .data))?.lenient(.message)
            }
        }
    }
}
