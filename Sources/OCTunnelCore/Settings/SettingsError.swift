/// A mistake in what the command line gave the resolution: the CLI says it as a usage error
/// (exit 64), with the same sentence.
public enum SettingsError: OCTunnelFailure, Equatable {
    /// Every failure here is in the settings the command line gave.
    public static let roomLayer = "settings"

    /// No target typed and none saved for this role and profile.
    case missingTarget(role: Role, profile: ProfileName)
    /// The typed target is not `[user@]host[:port]`.
    case badTarget(String, reason: String)

    /// Each case's exit code (64: a usage mistake) and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .missingTarget(let role, let profile):
            let option = profile.isDefault ? "" : " --profile \(profile)"
            return FailureDetails(
                .usage,
                """
                missing target: give [user@]host[:port] \
                (or save one with `octunnel \(role.rawValue) up TARGET --save\(option)`)
                """)
        case .badTarget(let text, let reason):
            return FailureDetails(
                .usage, "bad target \"\(text)\": \(reason) (expected [user@]host[:port], IPv6 as [::1]:2222)")
        }
    }

    /// One sentence with the next step, as the CLI's usage error says it.
    public var message: String { details.words }
}
