import Foundation

/// One question OpenCode's agent waits on, as its list route tells it: 1.x `GET /question`
/// (a bare array), 2.x `GET /api/question/request` (`{location, data: […]}`), each request
/// `{id "que_…", sessionID, questions: [{question, header, options: [{label, description}],
/// multiple?}], tool?}` (packages/schema/src/question.ts, packages/opencode/src/question).
/// Listed so that nothing waiting is missed; one asking a single question is answered with
/// `PermissionClient.answerQuestion` (its labels as OpenCode has them: `AskedQuestion`).
public struct PendingQuestion: Sendable, Equatable {
    public let id: String
    public let sessionID: String
    /// "Database: Which one?" (the first question; "+N more" when it asks several), shown safe.
    public let text: String
    /// The first question's choices (their labels), at most `PendingPermissionList.patternLimit`.
    public let options: [String]
    public let directory: String?
    public let askedAt: Date?
    public var sessionTitle: String?

    /// The questions in `body`, OpenCode `generation`'s shape; nil when the body is not that
    /// shape. Bounded as `PendingPermissionList.parse`: requests, texts and options capped,
    /// ids route-safe and without a secret, texts through `OutsideText.shown`.
    public static func parse(
        _ body: [UInt8], generation: OpenCodeGeneration, directory: String?,
        secrets: [String] = [], now: Date = Date()
    ) -> (items: [PendingQuestion], more: Int)? {
        guard let entries = generation.api.pendingQuestions(body) else { return nil }
        var items: [PendingQuestion] = []
        var more = 0
        let limit = PendingPermissionList.textLimit
        for entry in entries {
            guard let entry, let id = entry.id, let session = entry.sessionID,
                [id, session].allSatisfy({
                    PendingPermission.isRouteSafe($0) && OutsideText.redacting($0, secrets: secrets) == $0
                })
            else { continue }
            guard items.count < PendingPermissionList.limit else { more += 1; continue }
            let asked = entry.questions ?? []
            let first = asked.first ?? nil
            let header = first?.header.map { $0.isEmpty ? "" : "\($0): " } ?? ""
            let question = header + (first?.question ?? "?")
            let options = (first?.options ?? []).prefix(PendingPermissionList.patternLimit)
                .map { OutsideText.shown($0 ?? "?", secrets: secrets, limit: 80) }
            let text =
                OutsideText.shown(question, secrets: secrets, limit: limit)
                + (asked.count > 1 ? " (+\(asked.count - 1) more)" : "")
            items.append(
                PendingQuestion(
                    id: id, sessionID: session, text: text, options: options, directory: directory,
                    askedAt: PendingPermission.askedAt(id: id, now: now)))
        }
        return (items, more)
    }
}
