import Foundation

/// One permission OpenCode waits on before its agent goes on, as its list route tells it:
/// 1.x `GET /permission` (`{id, sessionID, permission, patterns, metadata, always, tool?}`,
/// packages/opencode/src/permission/index.ts), 2.x `GET /api/permission/request`
/// (`{location, data: [{id, sessionID, action, resources, save?, metadata?, reason?, source?}]}`,
/// packages/protocol/src/groups/permission.ts, packages/schema/src/permission.ts).
public struct PendingPermission: Sendable, Equatable {
    /// OpenCode's request id (`per_…`): letters, digits, `_` and `-` only, as it goes into a route.
    public let id: String
    public let sessionID: String
    /// What is asked: 1.x `permission`, 2.x `action` ("bash", "edit"), shown safe.
    public let kind: String
    /// What it applies to: 1.x `patterns`, 2.x `resources` ("git push"), shown safe.
    public let patterns: [String]
    /// The project directory it was listed for (nil: the server's own).
    public let directory: String?
    /// When it was asked, from its ascending id (`PendingPermission.askedAt`); nil when the id carries no time.
    public let askedAt: Date?
    /// Its session's title, when OpenCode told it (`PermissionClient` asks), shown safe.
    public var sessionTitle: String?

    public init(id: String, sessionID: String, kind: String, patterns: [String], directory: String?, askedAt: Date?) {
        (self.id, self.sessionID, self.kind, self.patterns, self.directory, self.askedAt) = (id, sessionID, kind, patterns, directory, askedAt)
    }

    /// "bash: git push, git tag": what a person is asked to allow.
    public var asked: String { patterns.isEmpty ? kind : "\(kind): \(patterns.joined(separator: ", "))" }

    /// Whether `text` can be an OpenCode id in a route: 1-128 ASCII letters, digits, `_` or `-`.
    /// Anything else (a `/`, `..`, a space) never reaches a request line.
    public static func isRouteSafe(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128 && text.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D
        }
    }

    /// When an ascending OpenCode id (`per_` + 12 hex digits of (ms × 0x1000 + counter) mod 2⁴⁸ +
    /// 14 base62, Identifier.ascending upstream) was made, as seen from `now`: the 36 bits of
    /// milliseconds it keeps wrap every ~795 days, so the newest time at or before `now` with
    /// those bits is taken. nil for an id of another shape, or one from more than a minute ahead
    /// of `now` (another clock).
    public static func askedAt(id: String, now: Date) -> Date? {
        let parts = id.split(separator: "_", maxSplits: 1)
        guard parts.count == 2, parts[1].utf8.count >= 12 else { return nil }
        guard let value = UInt64(parts[1].prefix(12), radix: 16) else { return nil }
        let wrap: Int64 = 1 << 36
        let kept = Int64(value >> 12)
        let nowMs = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let behind = ((nowMs - kept) % wrap + wrap) % wrap
        if behind > wrap - 60_000 { return now }  // up to a minute ahead: another clock, "just now"
        return Date(timeIntervalSince1970: Double(nowMs - behind) / 1000)
    }
}

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

    /// The list in `body`, OpenCode `generation`'s shape (1.x a bare array, 2.x `{"data":[…]}`);
    /// nil when the body is not that shape. Texts pass `OutsideText.shown` with `secrets`.
    public static func parse(_ body: [UInt8], generation: OpenCodeGeneration, directory: String?,
                             secrets: [String] = [], now: Date = Date()) -> PendingPermissionList? {
        guard let json = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else { return nil }
        let entries: [Any]
        switch generation {
        case .one:
            guard let array = json as? [Any] else { return nil }
            entries = array
        case .two:
            guard let object = json as? [String: Any], let array = object["data"] as? [Any] else { return nil }
            entries = array
        }
        var list = PendingPermissionList()
        for entry in entries {
            guard let object = entry as? [String: Any], let id = object["id"] as? String, isSafe(id, secrets),
                  let session = object["sessionID"] as? String, isSafe(session, secrets) else {
                list.skipped += 1
                continue
            }
            guard list.items.count < limit else {
                list.more += 1
                continue
            }
            let kind = (object[generation == .one ? "permission" : "action"] as? String) ?? "?"
            let patterns = (object[generation == .one ? "patterns" : "resources"] as? [Any]) ?? []
            let shownPatterns = patterns.prefix(patternLimit).map { OutsideText.shown(($0 as? String) ?? "?", secrets: secrets, limit: textLimit) }
                + (patterns.count > patternLimit ? ["+\(patterns.count - patternLimit) more"] : [])
            list.items.append(PendingPermission(id: id, sessionID: session, kind: OutsideText.shown(kind, secrets: secrets, limit: 80),
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
