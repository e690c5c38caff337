import Foundation

/// How `octunnel permission list` shows the pending permissions: one line each for a person,
/// one JSON object for a program.
extension PendingPermissionList {
    /// One line per request: id, how long ago, what is asked, session and directory; then
    /// "+N more" when the list was cut. Empty when nothing waits.
    public func humanLines(now: Date = Date()) -> [String] {
        items.map { item in
            let ago = item.askedAt.map { PendingPermission.ago(now.timeIntervalSince($0)) } ?? "-"
            let session = item.sessionTitle.map { "\($0), session \(item.sessionID)" } ?? "session \(item.sessionID)"
            return "\(item.id)  \(ago)  \(item.asked)  (\(session)\(item.directory.map { ", \(OutsideText.shown($0))" } ?? ""))"
        } + (more > 0 ? ["+\(more) more"] : [])
    }

    /// `{"openCode":"API 1","permissions":[{id, sessionID, sessionTitle?, permission, patterns, directory, askedAt, secondsAgo}],"more"}`.
    public func jsonText(generation: OpenCodeGeneration, now: Date = Date()) -> String {
        let permissions: [[String: Any]] = items.map { item in
            var object: [String: Any] = ["id": item.id, "sessionID": item.sessionID, "permission": item.kind, "patterns": item.patterns,
                                         "directory": item.directory.map { $0 as Any } ?? NSNull()]
            if let title = item.sessionTitle { object["sessionTitle"] = title }
            if let asked = item.askedAt {
                object["askedAt"] = UTCTimestamp.string(from: asked)
                object["secondsAgo"] = max(0, Int(now.timeIntervalSince(asked)))
            }
            return object
        }
        return jsonLine(["openCode": generation.label, "permissions": permissions, "more": more])
    }
}

extension PendingPermission {
    /// "just now", "40 s ago", "3 min ago", "2 h ago", "5 d ago".
    static func ago(_ seconds: TimeInterval) -> String {
        let whole = Int(max(0, seconds))
        switch whole {
        case ..<5: return "just now"
        case ..<120: return "\(whole) s ago"
        case ..<7200: return "\(whole / 60) min ago"
        case ..<172_800: return "\(whole / 3600) h ago"
        default: return "\(whole / 86400) d ago"
        }
    }
}
