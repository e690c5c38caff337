import Foundation

/// The user's ssh config asks for something octunnel cannot honour, or cannot be read.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum SSHConfigError: OCTunnelFailure, Equatable {
    case unsupportedSSHConfig(host: String, directive: String, value: String, file: String)
    case badSSHConfig(path: String, reason: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        .config
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        "ssh config"
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .unsupportedSSHConfig(let host, let directive, let value, let file):
            return "\(file) sets \(directive) \(value) for \(host); octunnel "
                + "does not support \(directive) yet and will not connect directly "
                + "instead. Give the VPS's own address as the target, or connect through the jump host yourself."
        case .badSSHConfig(let path, let reason):
            return "cannot use the ssh config for this target (\(path)): \(reason)."
        }
    }
}
