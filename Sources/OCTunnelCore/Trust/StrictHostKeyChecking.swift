/// The user's `StrictHostKeyChecking` (ssh_config(5)): what to do with a host key no file knows.
///
/// octunnel follows OpenSSH (sshconnect.c, `check_host_key`, `HOST_NEW`) where it can:
/// - `yes`: a host no file knows is refused; only `--expect-fingerprint` lets it in.
/// - `ask` (ssh's default, and octunnel's when nothing is set): ssh asks at the terminal;
///   octunnel, which runs unattended, trusts a host that nothing knows on first use, but stops
///   where ssh's question would warn ("keys of different type are already known for this host").
/// - `accept-new`: new keys are recorded without a word, even beside known keys of other types.
/// - `no` (`off`): as `accept-new` for new keys. A changed key still stops octunnel: ssh itself
///   goes on with a changed key only with port forwarding turned off, which is all octunnel does.
public enum StrictHostKeyChecking: String, Sendable, Equatable {
    case yes
    case ask
    case acceptNew = "accept-new"
    case no

    /// The value as ssh_config or `ssh -G` writes it (`yes`/`true`, `no`/`off`/`false`,
    /// `accept-new`, `ask`), case-insensitive; nil for anything else.
    public init?(configValue: String) {
        switch configValue.lowercased() {
        case "yes", "true": self = .yes
        case "no", "off", "false": self = .no
        case "accept-new": self = .acceptNew
        case "ask": self = .ask
        default: return nil
        }
    }

    /// Whether a host no file knows may be trusted on first use.
    var acceptsUnknownHost: Bool { self != .yes }

    /// Whether a new key may be recorded beside known keys of other types without the user's word.
    var acceptsNewKeyType: Bool { self == .acceptNew || self == .no }
}
