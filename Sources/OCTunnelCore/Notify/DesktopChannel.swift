import Foundation

/// The desktop's own notifications, when a desktop session is there: the freedesktop
/// Notifications service through `notify-send` on Linux (a session bus,
/// `DBUS_SESSION_BUS_ADDRESS`), `osascript` on macOS. A permission's notification, and a
/// question's with a few options, carries actions and waits for a choice (`NotificationAnswer`,
/// `QuestionNotificationAnswer`), holding its lane while it waits: at most
/// `Notifier.Limits.answering` wait at once, each at most `NotificationAnswer.wait` s; past that
/// bound it is shown as before, without actions, so a flood cannot pin the lanes. The choice
/// goes through `ChannelContext.answer`; one that could not be sent gets a follow-up notification.
final class DesktopChannel: NotificationChannel {
    let name = "the desktop"
    let immediate = false
    /// Seconds a notification without actions may take to show.
    static let showTimeout = 5.0

    /// A desktop channel when `environment` has a desktop session, nil otherwise (a server, ssh).
    init?(environment: [String: String]) {
        let probe = AgentMoment(kind: .finished, sessionID: "", title: nil, directory: nil, detail: nil)
        guard Self.command(probe, environment: environment) != nil else { return nil }
    }

    func deliver(_ moment: AgentMoment, context: ChannelContext) {
        let environment = context.environment
        guard context.answerable(moment) && Self.offersActions(moment), context.beginWaiting() else {
            guard let command = Self.command(moment, environment: environment) else { return }
            _ = try? ChildProcess.run(
                command.path, command.arguments, environment: environment, timeout: Self.showTimeout,
                groups: context.groups)
            return
        }
        let command = Self.command(moment, environment: environment, actions: true, secrets: context.secrets)
        let result = command.flatMap {
            try? ChildProcess.run(
                $0.path, $0.arguments, environment: environment, timeout: NotificationAnswer.wait + Self.showTimeout,
                groups: context.groups)
        }
        guard context.endWaiting(), let result else { return }
        let failure: String?
        let headline: String
        if let question = moment.question, question.offersActions {
            guard let reply = QuestionNotificationAnswer.chosen(result.stdout, question) else { return }
            failure = context.answer(reply, to: question, for: moment)
            headline = QuestionNotificationAnswer.failedHeadline(moment)
        } else {
            guard let reply = NotificationAnswer.chosen(result.stdout) else { return }
            failure = context.answer(reply, for: moment)
            headline = NotificationAnswer.failedHeadline(moment)
        }
        guard let failure, let path = Self.notifySend else { return }
        _ = try? ChildProcess.run(
            path, ["--app-name=octunnel", "--urgency=normal", "--", headline, Self.body(failure)],
            environment: environment, timeout: Self.showTimeout, groups: context.groups)
    }

    /// Whether this desktop can show `moment`'s actions (notify-send can; osascript cannot).
    static func offersActions(_ moment: AgentMoment) -> Bool {
        NotificationAnswer.answerable(moment) || QuestionNotificationAnswer.answerable(moment)
    }

    /// The program that shows `moment`, nil without a desktop session. With `actions` (a
    /// permission or a question that may be answered from it, Linux only), it carries
    /// `NotificationAnswer`'s or `QuestionNotificationAnswer`'s actions and waits for a choice.
    static func command(
        _ moment: AgentMoment, environment: [String: String], actions: Bool = false,
        secrets: [String] = []
    ) -> (path: String, arguments: [String])? {
        #if os(macOS)
            func quoted(_ text: String) -> String {
                "\"" + text.replacingScalars("\\", with: "\\\\").replacingScalars("\"", with: "\\\"") + "\""
            }
            return (
                "/usr/bin/osascript",
                ["-e", "display notification \(quoted(moment.message)) with title \(quoted(moment.headline))"]
            )
        #else
            guard environment["DBUS_SESSION_BUS_ADDRESS"]?.isEmpty == false else { return nil }
            guard let path = notifySend else { return nil }
            return (
                path,
                ["--app-name=octunnel", "--urgency=\(moment.kind == .finished ? "normal" : "critical")"]
                    + (actions ? actionArguments(moment, secrets: secrets) : []) + [
                        "--", moment.headline, body(moment.message),
                    ]
            )
        #endif
    }

    /// The actions of `moment`'s notification: a question's options where it offers them, else a permission's replies.
    static func actionArguments(_ moment: AgentMoment, secrets: [String]) -> [String] {
        guard let question = moment.question, QuestionNotificationAnswer.answerable(moment) else {
            return NotificationAnswer.arguments
        }
        return QuestionNotificationAnswer.arguments(question, secrets: secrets)
    }

    /// Where `notify-send` is, if it is.
    private static var notifySend: String? {
        ["/usr/bin/notify-send", "/bin/notify-send"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The body as notify-send must be given it to show `text` as it is: notify-send reads C
    /// escapes in the body (`g_strcompress`: a title's `\033` would become a real escape byte),
    /// so backslashes are doubled; and the Notifications service reads the body as markup
    /// (`<b>`, `&amp;`), so `&`, `<` and `>` are written as entities. The summary is plain text
    /// to both and goes as it is.
    static func body(_ text: String) -> String {
        var body = ""
        for character in text {
            switch character {
            case "\\": body += "\\\\"
            case "&": body += "&amp;"
            case "<": body += "&lt;"
            case ">": body += "&gt;"
            default: body.append(character)
            }
        }
        return body
    }
}
