/// The process exit codes octunnel uses, from BSD's sysexits.h; each user-facing error maps to one.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    case ok = 0
    /// `status`: no tunnel (or home side) of that profile is running (as LSB's `status` uses 3).
    case notRunning = 3
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
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

    /// Exit codes a service manager must not restart on (systemd's `RestartPreventExitStatus=`):
    /// retrying cannot fix them.
    public static let notRetriedByServices: [Int32] =
        [ExitStatus.usage, .dataError, .noInput, .hostKeyChanged, .permission, .config, .wrongPassphrase, .credentialsUnavailable].map(\.rawValue)
}
