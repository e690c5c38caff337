import Foundation

/// The pending permissions one list answer holds, bounded whatever the server sends.
public struct PendingPermissionList: Sendable, Equatable {
    /// At most this many are kept from one answer; the rest are counted in `more`.
    public static let limit = 100
    /// Each pattern is cut to this many characters, and at most `patternLimit` are kept.
    public static let textLimit = 200
    public static let patternLimit = 8

    public var items: [PendingPermission] = []
    /// Requests beyond `limit`.
    public var more = 0
    /// Entries that are not a request octunnel can answer (no id, an id unsafe in a route).
    public var skipped = 0
    /// The questions that wait too (`PendingQuestion`: listed, answered in OpenCode), and how many beyond the cap.
    public var questions: [PendingQuestion] = []
    public var moreQuestions = 0

    public init(items: [PendingPermission] = [], more: Int = 0, skipped: Int = 0) {
        (self.items, self.more, self.skipped) = (items, more, skipped)
    }

    /// The list in `body`, OpenCode `generation`'s shape (`OpenCodeDialect.pendingPermissions`: 1.x
    /// a bare array, 2.x `{"data":[…]}`); nil when the body is not that shape. Texts pass
    /// `OutsideText.shown` with `secrets`.
    public static func parse(
        _ body: [UInt8], generation: OpenCodeGeneration, directory: String?,
        secrets: [String] = [], now: Date = Date()
    ) -> PendingPermissionList? {
        guard let entries = generation.api.pendingPermissions(body) else { return nil }
        var list = PendingPermissionList()
        for entry in entries {
            guard let entry, let id = entry.id, isSafe(id, secrets), let session = entry.sessionID,
                isSafe(session, secrets)
            else {
                list.skipped += 1
                continue
            }
            guard list.items.count < limit else {
                list.more += 1
                continue
            }
            let patterns = entry.patterns
            let shownPatterns =
                patterns.prefix(patternLimit).map { OutsideText.shown($0 ?? "?", secrets: secrets, limit: textLimit) }
                + (patterns.count > patternLimit ? ["+\(patterns.count - patternLimit) more"] : [])
            list.items.append(
                PendingPermission(
                    id: id, sessionID: session, kind: OutsideText.shown(entry.kind ?? "?", secrets: secrets, limit: 80),
                    patterns: shownPatterns, directory: directory,
                    askedAt: PendingPermission.askedAt(id: id, now: now)))
        }
        return list
    }

    /// Route-safe, and without a secret in it (an id is shown whole, never redacted in part).
    private static func isSafe(_ text: String, _ secrets: [String]) -> Bool {
        PendingPermission.isRouteSafe(text) && OutsideText.redacting(text, secrets: secrets) == text
    }

    /// Another directory's list after this one.
    public mutating func append(_ other: PendingPermissionList) {
        for item in other.items where !items.contains(where: { $0.id == item.id }) {
            if items.count < Self.limit { items.append(item) } else { more += 1 }
        }
        more += other.more
        skipped += other.skipped
        for question in other.questions where !questions.contains(where: { $0.id == question.id }) {
            if questions.count < Self.limit { questions.append(question) } else { moreQuestions += 1 }
        }
        moreQuestions += other.moreQuestions
    }
}
