import Foundation

/// The health test through the tunnel: OpenCode did not answer as it should.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum HealthError: OCTunnelFailure, Equatable {
    /// Every failure here is the health test's.
    public static let roomLayer = "health"

    case healthFailed(summary: String, fix: String)
    case healthNeedsPassword(generation: OpenCodeGeneration?)
    case healthPasswordRefused(generation: OpenCodeGeneration?, username: String, source: String)
    case notOpenCode(remoteHost: String, remotePort: Int, detail: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .healthFailed(let summary, let fix):
            FailureDetails(.unavailable, "\(summary): \(fix)")
        case .healthNeedsPassword(let generation):
            FailureDetails(
                .openCodePassword,
                generation?.api.passwordNeededText
                    ?? """
                    OpenCode asks for a password: set OPENCODE_PASSWORD (and OPENCODE_SERVER_USERNAME \
                    if it is not `opencode`), or give --password-file PATH.
                    """)
        case .healthPasswordRefused(let generation, let username, let source):
            FailureDetails(
                .openCodePassword,
                """
                OpenCode refused the password (from \(source)) for user `\(username)`: \
                \((generation ?? .one).api.passwordRefusedHint); \
                set OPENCODE_SERVER_USERNAME if its user is not `opencode`.
                """)
        case .notOpenCode(let remoteHost, let remotePort, let detail):
            FailureDetails(
                .unavailable,
                """
                something answers on VPS \(Self.endpoint(remoteHost, remotePort)) but it is not an OpenCode server \
                (\(detail)): check --remote-port and --home-port.
                """)
        }
    }
}
