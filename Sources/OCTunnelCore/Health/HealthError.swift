import Foundation

/// The health test through the tunnel: OpenCode did not answer as it should.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum HealthError: OCTunnelFailure, Equatable {
    case healthFailed(summary: String, fix: String)
    case healthNeedsPassword(generation: OpenCodeGeneration?)
    case healthPasswordRefused(generation: OpenCodeGeneration?, username: String, source: String)
    case notOpenCode(remoteHost: String, remotePort: Int, detail: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .healthFailed, .notOpenCode: .unavailable
        case .healthNeedsPassword, .healthPasswordRefused: .openCodePassword
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        "health"
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .healthFailed(let summary, let fix):
            return "\(summary): \(fix)"
        case .healthNeedsPassword(let generation):
            return generation?.api.passwordNeededText
                ?? "OpenCode asks for a password: set OPENCODE_PASSWORD (and "
                + "OPENCODE_SERVER_USERNAME if it is not `opencode`), or give --password-file PATH."
        case .healthPasswordRefused(let generation, let username, let source):
            let hint = (generation ?? .one).api.passwordRefusedHint
            return "OpenCode refused the password (from \(source)) for user "
                + "`\(username)`: \(hint); set OPENCODE_SERVER_USERNAME if its user is not `opencode`."
        case .notOpenCode(let remoteHost, let remotePort, let detail):
            return "something answers on VPS \(Self.endpoint(remoteHost, remotePort)) "
                + "but it is not an OpenCode server (\(detail)): check --remote-port and --home-port."
        }
    }
}
