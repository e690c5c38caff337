import Foundation

/// The user's ssh config asks for something octunnel cannot honour, or cannot be read.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum SSHConfigError: OCTunnelFailure, Equatable {
    /// Every failure here is the ssh config's.
    public static let roomLayer = "ssh config"

    case unsupportedSSHConfig(host: String, directive: String, value: String, file: String)
    case badSSHConfig(path: String, reason: String)

    /// Each case's exit code (78: the ssh config is not usable) and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .unsupportedSSHConfig(let host, let directive, let value, let file):
            FailureDetails(
                .config,
                """
                \(file) sets \(directive) \(value) for \(host); octunnel does not support \(directive) yet \
                and will not connect directly instead. Give the VPS's own address as the target, \
                or connect through the jump host yourself.
                """)
        case .badSSHConfig(let path, let reason):
            FailureDetails(.config, "cannot use the ssh config for this target (\(path)): \(reason).")
        }
    }
}
