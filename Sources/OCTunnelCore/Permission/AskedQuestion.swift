import Foundation

/// One question request as OpenCode tells it, kept as it came: its id, its session and the
/// options' labels of its first question, exactly (they are what an answer sends back). The same
/// shape in both generations and on both surfaces: the `question.asked` event's fields
/// (`question.v2.asked` in 2.x) and an entry of the pending list, `{id "que_…", sessionID,
/// questions: [{question, header, options: [{label, description}], multiple?, custom?}], tool?}`
/// (1.x packages/opencode/src/question/index.ts `Question.Request`; 2.x packages/schema/src/
/// question.ts `Request`).
///
/// Labels are the far side's words: they are kept only to be compared and sent back, never
/// shown without `OutsideText.shown`, never used as an argument's name.
public struct AskedQuestion: Sendable, Equatable {
    /// At most this many options get a notification's actions (libnotify and dunst show a few well).
    public static let actionLimit = 3
    /// A label longer than this many bytes is not offered as an action (nor kept).
    public static let labelLimit = 200

    public let id: String
    public let sessionID: String
    /// How many questions the request asks at once.
    public let count: Int
    /// Whether its first question takes several choices (`multiple`).
    public let multiple: Bool
    /// The first question's option labels as OpenCode sent them; empty when there are more than
    /// `PendingPermissionList.patternLimit` or one is not a short string (nothing to offer).
    public let labels: [String]

    public init(id: String, sessionID: String, count: Int, multiple: Bool, labels: [String]) {
        (self.id, self.sessionID, self.count, self.multiple, self.labels) = (id, sessionID, count, multiple, labels)
    }

    /// The request `wire` (an event's fields or a list entry, `QuestionRequestWire`); nil without
    /// a route-safe id and session.
    public init?(wire: QuestionRequestWire) {
        guard let id = wire.id, let session = wire.sessionID, PendingPermission.isRouteSafe(id),
            PendingPermission.isRouteSafe(session)
        else {
            return nil
        }
        let questions = wire.questions ?? []
        let first = questions.first ?? nil
        let options = first?.options ?? []
        let labels = options.prefix(PendingPermissionList.patternLimit + 1).compactMap { $0 }
        let usable =
            options.count <= PendingPermissionList.patternLimit && labels.count == options.count
            && labels.allSatisfy { !$0.isEmpty && $0.utf8.count <= Self.labelLimit }
        self.init(
            id: id, sessionID: session, count: questions.count, multiple: first?.multiple == true,
            labels: usable ? labels : [])
    }

    /// The request in `fields`, as its JSON would carry them (`init(wire:)`).
    public init?(fields: [String: Any]) {
        guard let json = try? JSONSerialization.data(withJSONObject: fields),
            let wire = try? JSONDecoder().decode(QuestionRequestWire.self, from: json)
        else { return nil }
        self.init(wire: wire)
    }

    /// Whether a notification may offer its options as actions: one question, one choice, one to
    /// `actionLimit` distinct options. Anything else is answered in OpenCode.
    public var offersActions: Bool {
        count == 1 && !multiple && (1...Self.actionLimit).contains(labels.count) && Set(labels).count == labels.count
    }

    /// The request `id` of a pending question list `body` (OpenCode `generation`'s shape), if listed.
    static func listed(_ id: String, in body: [UInt8], generation: OpenCodeGeneration) -> AskedQuestion? {
        guard let entries = generation.api.pendingQuestions(body) else { return nil }
        for case let entry? in entries where entry.id == id {
            return AskedQuestion(wire: entry)
        }
        return nil
    }
}
