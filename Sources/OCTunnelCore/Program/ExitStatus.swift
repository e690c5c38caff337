/// The process exit codes octunnel uses, from BSD's sysexits.h; each user-facing error maps to one.
///
/// This is the one table of exit codes: `octunnel --help` is rendered from it (`helpSummary`),
/// and a test holds docs/cli.md's "Exit codes" table to it, code by code and name by name. A new
/// code is a new case plus its row in `documentation` (the compiler asks for it) and in docs/cli.md.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    case ok = 0
    /// `status`: no tunnel (or home side) of that profile is running (as LSB's `status` uses 3).
    case notRunning = 3
    /// `permission allow|always|reject|answer|dismiss`: the request is no longer pending (answered elsewhere, OpenCode restarted).
    case notPending = 4
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case cannotCreate = 73
    case hostKeyChanged = 76
    case permission = 77
    /// EX_CONFIG: the ssh client config asks for something octunnel cannot honour (ProxyJump, ProxyCommand) or is unreadable to ssh.
    case config = 78
    /// OpenCode asks for a password and none was given, or it refused the one given.
    case openCodePassword = 79
    /// A key's passphrase was wrong.
    case wrongPassphrase = 80
    /// No passphrase could be asked, or no usable ssh-agent.
    case credentialsUnavailable = 81
    /// The push server's certificate (or host name) did not verify; nothing was sent (`--push-ca-file`).
    case pushCertificate = 82
    /// `push test`: the push was sent but no button was tapped within the wait.
    case pushNotAnswered = 83
    /// A second Ctrl-C or SIGTERM while `tunnel up` or `home up` is stopping (128 + SIGINT, as shells report it).
    case interrupted = 130

    /// The code's name (docs/cli.md's Name column) and what it means, in the few words `--help` shows.
    public var documentation: (name: String, help: String) {
        switch self {
        case .ok: ("ok", "ok")
        case .notRunning: ("not running", "not running (status)")
        case .notPending: ("not pending", "permission or question no longer pending")
        case .usage: ("usage", "usage")
        case .dataError: ("data error", "bad data in a file")
        case .noInput: ("no input", "no key or settings yet")
        case .unavailable: ("unavailable", "unavailable")
        case .cannotCreate: ("cannot create", "would overwrite")
        case .hostKeyChanged: ("host key changed", "host key changed")
        case .permission: ("permission", "permission")
        case .config: ("config", "ssh config not usable")
        case .openCodePassword: ("OpenCode password", "OpenCode password missing or refused")
        case .wrongPassphrase: ("wrong passphrase", "wrong passphrase")
        case .credentialsUnavailable: ("credentials unavailable", "no passphrase prompt or ssh-agent")
        case .pushCertificate: ("push certificate", "push server's certificate not verified")
        case .pushNotAnswered: ("push not answered", "push test: no button tapped")
        case .interrupted: ("interrupted", "second Ctrl-C while stopping")
        }
    }

    /// Every code with its meaning, for `octunnel --help`: "Exit codes: 0 ok, 3 not running (status), …".
    public static var helpSummary: String {
        "Exit codes: " + allCases.map { "\($0.rawValue) \($0.documentation.help)" }.joined(separator: ", ")
            + ". See docs/cli.md."
    }

    /// Exit codes a service manager must not restart on (systemd's `RestartPreventExitStatus=`):
    /// retrying cannot fix them.
    public static let notRetriedByServices: [Int32] =
        [
            ExitStatus.usage, .dataError, .noInput, .hostKeyChanged, .permission, .config, .wrongPassphrase,
            .credentialsUnavailable,
        ].map(\.rawValue)
}
