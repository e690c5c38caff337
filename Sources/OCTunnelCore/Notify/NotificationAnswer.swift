import Foundation

/// Answering a permission from its desktop notification (issue 48): the notification carries
/// three actions, "Allow once", "Allow always", "Reject" (`notify-send --action=NAME=Label`,
/// libnotify 0.8, which waits and prints the chosen action's NAME); the one chosen becomes
/// OpenCode's reply, sent through the tunnel with the health test's credentials
/// (`PermissionClient.answer`, which sends only to a request OpenCode still lists).
///
/// Only a permission octunnel was itself told, that named its id and was told alone (not a
/// merged "+N more"), gets actions; the only thing an action sends is that id's reply.
enum NotificationAnswer {
    /// The action names: OpenCode's own words for the replies (`PermissionReply`'s raw values).
    static let actions: [(reply: PermissionReply, label: String)] = [
        (.once, "Allow once"), (.always, "Allow always"), (.reject, "Reject"),
    ]

    /// Seconds a notification with actions waits for a choice; then it expires (the server closes
    /// it, `--expire-time`) and its program ends: the permission still waits in
    /// `octunnel permission list`. The program is killed a few seconds past this if it has not.
    static let wait = 120.0

    /// The `--action` and `--expire-time` options that make `notify-send` wait for a choice.
    static var arguments: [String] {
        actions.map { "--action=\($0.reply.rawValue)=\($0.label)" } + ["--expire-time=\(Int(wait * 1000))"]
    }

    /// The reply `notify-send` printed (the chosen action's name, alone on its last line); nil
    /// when the notification was closed, expired or the program was stopped.
    static func chosen(_ stdout: String) -> PermissionReply? {
        guard let line = stdout.split(whereSeparator: \.isNewline).last else { return nil }
        return PermissionReply(rawValue: line.trimmingCharacters(in: .whitespaces))
    }

    /// Whether `moment` gets actions: a permission told alone that named its request.
    static func answerable(_ moment: AgentMoment) -> Bool {
        #if os(macOS)
            return false // osascript's notifications have no actions
        #else
            return moment.kind == .permission && moment.merged == nil && moment.permissionID?.isEmpty == false
        #endif
    }

    /// The line on stderr once a reply was sent.
    static func sentLine(_ reply: PermissionReply, _ moment: AgentMoment) -> String {
        "permission \(OutsideText.shown(moment.permissionID ?? "", limit: 128)) \(reply.done) from the notification: \(moment.sessionName)"
    }

    /// The follow-up notification's headline when a reply could not be sent.
    static func failedHeadline(_ moment: AgentMoment) -> String {
        "OpenCode's permission was not answered: \(moment.sessionName)"
    }
}

/// Sends a reply chosen on a notification: `PermissionClient.answer` through the tunnel's local
/// port, for the permission `id` of the project `directory` (nil: OpenCode's own).
typealias PermissionAnswerer = @Sendable (_ id: String, _ directory: String?, _ reply: PermissionReply) throws -> Void
