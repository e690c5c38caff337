import Foundation

/// One of the three moments a user who left the desk waits for: the agent finished, it asks
/// for permission (and waits until someone answers), or the session failed.
public struct AgentMoment: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case finished, permission, failed
    }

    public let kind: Kind
    public let sessionID: String
    /// The session's title (written by the agent: outside text), if known.
    public let title: String?
    /// The project directory, if known.
    public let directory: String?
    /// What is asked (permission), the error's name and message (failed); for finished nil, or
    /// words of our own (told after a cut: "finished while you were away").
    public let detail: String?
    public let at: Date
    /// The permission request's id (OpenCode's, to answer it with), for a permission that named one.
    public var permissionID: String?
    /// The question request told (`question.asked`), as OpenCode sent it: its options' labels are
    /// what an action of its notification may send (`QuestionNotificationAnswer`).
    public var question: AskedQuestion?
    /// Set on the one notice that stands for moments not told one by one (`NotifyBudget`).
    public var merged: Merged?

    /// How many moments one notice stands for: "+12 more permissions asked in Fix the login bug
    /// and 2 other sessions".
    public struct Merged: Sendable, Equatable {
        /// The moments merged.
        public let count: Int
        /// The sessions they came from beside the one named.
        public let otherSessions: Int
    }

    public init(kind: Kind, sessionID: String, title: String?, directory: String?, detail: String?, at: Date = Date()) {
        self.kind = kind
        self.sessionID = sessionID
        self.title = title
        self.directory = directory
        self.detail = detail
        self.at = at
    }

    /// This moment with `secrets` taken out of every text it carries (the title, the directory,
    /// what is asked, the ids): each surface is made from these.
    func redacted(_ secrets: [String]) -> AgentMoment {
        func clean(_ text: String) -> String { OutsideText.redacting(text, secrets: secrets) }
        var moment = AgentMoment(
            kind: kind, sessionID: clean(sessionID), title: title.map(clean), directory: directory.map(clean),
            detail: detail.map(clean), at: at)
        moment.permissionID = permissionID.map(clean)
        // A question whose id or labels hold a secret gets no actions: a label is sent back as it
        // came or not at all.
        moment.question = question.flatMap { asked in
            ([asked.id] + asked.labels).allSatisfy { clean($0) == $0 } ? asked : nil
        }
        moment.merged = merged
        return moment
    }

    /// The session as a person recognises it: its title, else its id; the directory's last part
    /// beside it; and how many other sessions a merged notice speaks for.
    public var sessionName: String {
        var name = OutsideText.shown(title?.isEmpty == false ? title! : sessionID, limit: 80)
        if let directory, !directory.isEmpty {
            name += " (\(OutsideText.shown((directory as NSString).lastPathComponent, limit: 60)))"
        }
        guard let others = merged?.otherSessions, others > 0 else { return name }
        return name + " and \(others) other session\(others == 1 ? "" : "s")"
    }

    /// The notification's headline.
    public var headline: String {
        switch kind {
        case .finished: return "OpenCode finished: \(sessionName)"
        case .permission: return "OpenCode asks for permission: \(sessionName)"
        case .failed: return "OpenCode failed: \(sessionName)"
        }
    }

    /// The notification's body (one line, clean for a terminal).
    public var message: String {
        if let merged {
            let what =
                switch kind {
                case .finished: "finished"
                case .permission: "permissions asked"
                case .failed: "failures"
                }
            return "+\(merged.count) more \(what) in \(sessionName)"
        }
        switch kind {
        case .finished: return detail.map { OutsideText.shown($0, limit: 200) } ?? "the agent is done and waits for you"
        case .permission: return detail.map { OutsideText.shown($0, limit: 200) } ?? "it waits for an answer"
        case .failed: return detail.map { OutsideText.shown($0, limit: 200) } ?? "the session stopped with an error"
        }
    }

    /// The line `tunnel up` and `home up` print; a request told alone says how to answer it.
    public var line: String { "notify: \(headline): \(message)" + (answerHint.map { " · answer: " + $0 } ?? "") }

    /// The commands that answer this request, with its id (nil: nothing to answer, or merged):
    /// `octunnel permission allow|always|reject ID`, or a question's `answer ID LABEL|dismiss ID`.
    public var answerHint: String? {
        guard merged == nil else { return nil }
        if let question, !question.id.isEmpty {
            let id = OutsideText.shown(question.id, limit: 128)
            return "octunnel permission answer \(id) LABEL | octunnel permission dismiss \(id)"
        }
        guard kind == .permission, let permissionID, !permissionID.isEmpty else { return nil }
        return "octunnel permission allow|always|reject \(OutsideText.shown(permissionID, limit: 128))"
    }

    /// What `--notify-command` gets in its environment.
    public var environment: [String: String] {
        var values = [
            "OCTUNNEL_EVENT": kind.rawValue, "OCTUNNEL_SESSION_ID": OutsideText.shown(sessionID, limit: 200),
            "OCTUNNEL_SESSION_TITLE": OutsideText.shown(title ?? "", limit: 200), "OCTUNNEL_MESSAGE": message,
            "OCTUNNEL_TITLE": headline,
        ]
        values["OCTUNNEL_DIRECTORY"] = OutsideText.shown(directory ?? "", limit: 500)
        if let permissionID, kind == .permission, merged == nil {
            values["OCTUNNEL_PERMISSION_ID"] = OutsideText.shown(permissionID, limit: 200)
        }
        if let merged { values["OCTUNNEL_MERGED"] = String(merged.count) }
        return values
    }
}
