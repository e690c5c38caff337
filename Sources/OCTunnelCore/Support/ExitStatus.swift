/// The process exit codes octunnel uses, from BSD's sysexits.h; each user-facing error maps to one.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    case ok = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    case cannotCreate = 73
    case hostKeyChanged = 76
    case permission = 77
    /// A key's passphrase was wrong.
    case wrongPassphrase = 80
    /// No passphrase could be asked, or no usable ssh-agent.
    case credentialsUnavailable = 81
}
