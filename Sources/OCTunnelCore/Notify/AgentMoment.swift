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
    /// What is asked (permission), the error's name and message (failed); nil for finished.
    public let detail: String?
    public let at: Date

    public init(kind: Kind, sessionID: String, title: String?, directory: String?, detail: String?, at: Date = Date()) {
        self.kind = kind
        self.sessionID = sessionID
        self.title = title
        self.directory = directory
        self.detail = detail
        self.at = at
    }

    /// The session as a person recognises it: its title, else its id; the directory's last part beside it.
    public var sessionName: String {
        let name = OutsideText.shown(title?.isEmpty == false ? title! : sessionID, limit: 80)
        guard let directory, !directory.isEmpty else { return name }
        return "\(name) (\(OutsideText.shown((directory as NSString).lastPathComponent, limit: 60)))"
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
        switch kind {
        case .finished: return "the agent is done and waits for you"
        case .permission: return detail.map { OutsideText.shown($0, limit: 200) } ?? "it waits for an answer"
        case .failed: return detail.map { OutsideText.shown($0, limit: 200) } ?? "the session stopped with an error"
        }
    }

    /// The line `tunnel up` prints.
    public var line: String { "notify: \(headline): \(message)" }

    /// What `--notify-command` gets in its environment.
    public var environment: [String: String] {
        var values = ["OCTUNNEL_EVENT": kind.rawValue, "OCTUNNEL_SESSION_ID": OutsideText.shown(sessionID, limit: 200),
                      "OCTUNNEL_SESSION_TITLE": OutsideText.shown(title ?? "", limit: 200), "OCTUNNEL_MESSAGE": message,
                      "OCTUNNEL_TITLE": headline]
        values["OCTUNNEL_DIRECTORY"] = OutsideText.shown(directory ?? "", limit: 500)
        return values
    }
}
