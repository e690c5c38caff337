import ArgumentParser
import OCTunnelCore

/// The notification choices of `tunnel up` and `home up` (`NotifySettings`), for the settings' resolution.
struct NotifyFlags: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A program run (no shell) each time the agent finishes, asks "
                + "for permission or fails, the facts in its environment (OCTUNNEL_EVENT, "
                + "OCTUNNEL_SESSION_TITLE, OCTUNNEL_MESSAGE, …): a two-line script can push them to a phone.",
            valueName: "PROGRAM"))
    var notifyCommand: String?

    @Option(
        help: ArgumentHelp(
            "Seconds --notify-command may run before it is stopped (default: \(NotifyOptions.defaultTimeout), or as saved).",
            valueName: "S"))
    var notifyTimeout: Int?

    @Flag(
        inversion: .prefixedNo,
        help:
            "Follow OpenCode's event stream and notify when the agent finishes, asks or fails; default: on, or as saved."
    )
    var notify: Bool?

    func validate() throws {
        if notify == false && notifyCommand != nil {
            throw ValidationError("--notify-command and --no-notify: pick one")
        }
        if notifyCommand?.isEmpty == true { throw ValidationError("--notify-command needs a program") }
        let timeouts = NotifyOptions.timeoutRange
        if let notifyTimeout, !timeouts.contains(notifyTimeout) {
            throw ValidationError("--notify-timeout must be \(timeouts.lowerBound)-\(timeouts.upperBound) seconds")
        }
    }

    /// These choices, as the settings' flags (nil: not given).
    func apply(to flags: inout SettingsFlags) {
        flags.notifications = NotifySettings(notify: notify, notifyCommand: notifyCommand, notifyTimeout: notifyTimeout)
    }
}
