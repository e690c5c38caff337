import Foundation

/// What a running `up` (`tunnel up` or `home up`) does with the agent's moments
/// (`--notify-command`, `--no-notify`, `--notify-timeout`, `--push`), and the one place its channels are
/// made (`channels`): a new channel's options go here, and its saved keys in `NotifySettings`.
public struct NotifyOptions: Sendable, Equatable {
    /// Follow OpenCode's event stream and notify (`--no-notify` turns it off).
    public var enabled = true
    /// A program run once per moment, no shell, the facts in its environment (`AgentMoment.environment`).
    public var command: String?
    /// Seconds the program may run before it is killed.
    public var commandTimeout = Double(defaultTimeout)
    /// `--notify-timeout`'s default and its bounds, in seconds.
    public static let defaultTimeout = CommandChannel.Options.defaultTimeout
    public static let timeoutRange = CommandChannel.Options.timeoutRange
    /// Show a desktop notification when a desktop session is there.
    public var desktop = true
    /// The phone push (`--push`, or the profile's saved `push` section, `PushChoices`); nil: none.
    public var push: PushRun?

    /// Notifications on (or off), with `command` as the program; the desktop when there is one.
    public init(enabled: Bool = true, command: String? = nil) {
        self.enabled = enabled
        self.command = command
    }

    /// The channels these options ask for, beside the line on stderr (always there): the
    /// program's, and the desktop's when `environment` has a desktop session.
    func channels(environment: [String: String]) -> [any NotificationChannel] {
        var channels: [any NotificationChannel] = [StderrChannel()]
        if let command {
            channels.append(CommandChannel(CommandChannel.Options(program: command, timeout: commandTimeout)))
        }
        if desktop, let channel = DesktopChannel(environment: environment) { channels.append(channel) }
        if let push { channels.append(PushNotificationChannel(push)) }
        return channels
    }
}
