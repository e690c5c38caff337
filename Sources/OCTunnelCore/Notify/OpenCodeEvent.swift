import Foundation

/// One event of OpenCode's event stream, whichever shape its version sends: 2.x's `/api/event`
/// (`{"id","type","data":{…}}`), 1.x's `/event` (`{"id","type","properties":{…}}`) and
/// `/global/event` (`{"directory","payload":{"id","type","properties"}}`).
struct OpenCodeEvent {
    let type: String
    /// 2.x's `data`, 1.x's `properties`.
    let fields: [String: Any]
    /// `/global/event`'s project directory.
    let directory: String?
    /// 2.x: a durable event's position in its session's log (`durable.seq`, packages/schema/src/event.ts).
    var seq: Int?

    init?(data: String) {
        guard data.utf8.count <= 1 << 20,
              let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { return nil }
        let inner = object["payload"] as? [String: Any] ?? object
        guard let type = inner["type"] as? String else { return nil }
        self.type = type
        fields = inner["data"] as? [String: Any] ?? inner["properties"] as? [String: Any] ?? [:]
        directory = object["directory"] as? String
        seq = AgentSessionLog.seq((inner["durable"] as? [String: Any])?["seq"])
    }

    init(type: String, fields: [String: Any], directory: String? = nil) {
        self.type = type
        self.fields = fields
        self.directory = directory
    }

    /// A string field, or one inside `info` / `part` (session.updated, message.part.updated).
    func string(_ key: String) -> String? {
        fields[key] as? String ?? (fields["info"] as? [String: Any])?[key] as? String ?? (fields["part"] as? [String: Any])?[key] as? String
    }

    /// The session the event is about (an empty id names none).
    var sessionID: String? {
        let id = string("sessionID") ?? (type.hasPrefix("session.") ? (fields["info"] as? [String: Any])?["id"] as? String : nil)
        return id?.isEmpty == false ? id : nil
    }
}
