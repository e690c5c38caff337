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
        (self.id, self.sessionID, self.kind, self.patterns, self.directory, self.askedAt) = (
            id, sessionID, kind, patterns, directory, askedAt
        )
    }

    /// "bash: git push, git tag": what a person is asked to allow.
    public var asked: String { patterns.isEmpty ? kind : "\(kind): \(patterns.joined(separator: ", "))" }

    /// Whether `text` can be an OpenCode id in a route: 1-128 ASCII letters, digits, `_` or `-`.
    /// Anything else (a `/`, `..`, a space) never reaches a request line.
    public static func isRouteSafe(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128
            && text.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F
                    || $0 == 0x2D
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
        if behind > wrap - 60_000 { return now } // up to a minute ahead: another clock, "just now"
        return Date(timeIntervalSince1970: Double(nowMs - behind) / 1000)
    }
}
