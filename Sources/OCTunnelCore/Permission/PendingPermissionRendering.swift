import Foundation

/// How `octunnel permission list` shows the pending permissions: one line each for a person,
/// one JSON object for a program.
extension PendingPermissionList {
    /// One line per request: id, how long ago, what is asked, session and directory; then
    /// "+N more" when the list was cut. Empty when nothing waits.
    public func humanLines(now: Date = Date()) -> [String] {
        func line(
            _ id: String, _ askedAt: Date?, _ what: String, _ sessionID: String, _ title: String?, _ directory: String?
        ) -> String {
            let ago = askedAt.map { PendingPermission.ago(now.timeIntervalSince($0)) } ?? "-"
            let session = title.map { "\($0), session \(sessionID)" } ?? "session \(sessionID)"
            return "\(id)  \(ago)  \(what)  (\(session)\(directory.map { ", \(OutsideText.shown($0))" } ?? ""))"
        }
        return items.map { line($0.id, $0.askedAt, $0.asked, $0.sessionID, $0.sessionTitle, $0.directory) }
            + (more > 0 ? ["+\(more) more"] : [])
            + questions.map { question in
                let options = question.options.isEmpty ? "" : " [\(question.options.joined(separator: ", "))]"
                return line(
                    question.id, question.askedAt, "question: \(question.text)\(options)", question.sessionID,
                    question.sessionTitle, question.directory)
            }
            + (moreQuestions > 0 ? ["+\(moreQuestions) more questions"] : [])
    }

    /// `askedAt` and `secondsAgo` of a request asked at `asked` (nothing when its time is not known).
    private static func when(_ asked: Date?, now: Date) -> [String: Any] {
        guard let asked else { return [:] }
        return ["askedAt": UTCTimestamp.string(from: asked), "secondsAgo": max(0, Int(now.timeIntervalSince(asked)))]
    }

    /// `{"openCode":"API 1","permissions":[{id, sessionID, sessionTitle?, permission, patterns, directory, askedAt, secondsAgo}],"more",
    /// "questions":[{id, sessionID, sessionTitle?, question, options, directory, askedAt, secondsAgo}],"moreQuestions"}`.
    public func jsonText(generation: OpenCodeGeneration, now: Date = Date()) -> String {
        let permissions: [[String: Any]] = items.map { item in
            var object: [String: Any] = [
                "id": item.id, "sessionID": item.sessionID, "permission": item.kind, "patterns": item.patterns,
                "directory": item.directory.map { $0 as Any } ?? NSNull(),
            ]
            if let title = item.sessionTitle { object["sessionTitle"] = title }
            return object.merging(Self.when(item.askedAt, now: now)) { $1 }
        }
        let questions: [[String: Any]] = self.questions.map { question in
            var object: [String: Any] = [
                "id": question.id, "sessionID": question.sessionID, "question": question.text,
                "options": question.options,
                "directory": question.directory.map { $0 as Any } ?? NSNull(),
            ]
            if let title = question.sessionTitle { object["sessionTitle"] = title }
            return object.merging(Self.when(question.askedAt, now: now)) { $1 }
        }
        return jsonLine([
            "openCode": generation.label, "permissions": permissions, "more": more, "questions": questions,
            "moreQuestions": moreQuestions,
        ])
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
