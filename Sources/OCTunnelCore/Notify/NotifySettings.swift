/// The notification choices as typed (`--notify`/`--no-notify`, `--notify-command`,
/// `--notify-timeout`; nil: not given) and as saved with `--save` in either role's section of
/// `config.json` (the keys `notify`, `notifyCommand`, `notifyTimeout`, beside the section's
/// own, absent when not chosen). One type for both: a channel's new option is one field here.
public struct NotifySettings: Codable, Equatable, Sendable {
    /// `--no-notify`: false; absent: notifications on.
    public var notify: Bool?
    /// `--notify-command`, as typed; absent: none.
    public var notifyCommand: String?
    /// `--notify-timeout` in seconds when not the default; absent: the default.
    public var notifyTimeout: Int?

    /// The choices given (nil: not given, or not saved).
    public init(notify: Bool? = nil, notifyCommand: String? = nil, notifyTimeout: Int? = nil) {
        (self.notify, self.notifyCommand, self.notifyTimeout) = (notify, notifyCommand, notifyTimeout)
    }

    /// What `--save` writes for `options`: only what differs from the defaults.
    public init(saving options: NotifyOptions) {
        let timeout = Int(options.commandTimeout)
        self.init(
            notify: options.enabled ? nil : false, notifyCommand: options.command,
            notifyTimeout: timeout == NotifyOptions.defaultTimeout ? nil : timeout)
    }

    /// True when nothing is chosen.
    public var isEmpty: Bool { self == NotifySettings() }

    /// The run's options from these typed choices and `saved`: a command on the command line
    /// turns notifications on whatever was saved; `--no-notify` turns them off and drops the
    /// saved command; neither: the saved choice as a whole.
    public func resolved(saved: NotifySettings?) -> NotifyOptions {
        let typed = notify != nil || notifyCommand != nil
        let enabled = notify ?? (notifyCommand != nil ? true : saved?.notify ?? true)
        var options = NotifyOptions(
            enabled: enabled, command: enabled ? (typed ? notifyCommand : saved?.notifyCommand) : nil)
        options.commandTimeout = Double(notifyTimeout ?? saved?.notifyTimeout ?? NotifyOptions.defaultTimeout)
        return options
    }

    /// The problem a hand-edited file may hold, or nil.
    public var problem: String? {
        let range = NotifyOptions.timeoutRange
        if let notifyTimeout, !range.contains(notifyTimeout) {
            return "notifyTimeout \(notifyTimeout) is not \(range.lowerBound)-\(range.upperBound) seconds"
        }
        return notifyCommand?.isEmpty == true ? "notifyCommand is empty" : nil
    }

    private enum Key: String, CodingKey {
        case notify, notifyCommand, notifyTimeout
    }

    /// Reads the keys from the section's own level (they sit beside its other keys).
    public init(from decoder: Decoder) throws {
        let keys = try decoder.container(keyedBy: Key.self)
        notify = try keys.decodeIfPresent(Bool.self, forKey: .notify)
        notifyCommand = try keys.decodeIfPresent(String.self, forKey: .notifyCommand)
        notifyTimeout = try keys.decodeIfPresent(Int.self, forKey: .notifyTimeout)
    }

    /// Writes the keys chosen at the section's own level.
    public func encode(to encoder: Encoder) throws {
        var keys = encoder.container(keyedBy: Key.self)
        try keys.encodeIfPresent(notify, forKey: .notify)
        try keys.encodeIfPresent(notifyCommand, forKey: .notifyCommand)
        try keys.encodeIfPresent(notifyTimeout, forKey: .notifyTimeout)
    }
}
