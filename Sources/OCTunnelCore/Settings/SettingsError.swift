/// A mistake in what the command line gave the resolution: the CLI says it as a usage error
/// (exit 64), with the same sentence.
public enum SettingsError: Error, Sendable, Equatable {
    /// No target typed and none saved for this role and profile.
    case missingTarget(role: Role, profile: ProfileName)
    /// The typed target is not `[user@]host[:port]`.
    case badTarget(String, reason: String)

    /// One sentence with the next step.
    public var message: String {
        switch self {
        case .missingTarget(let role, let profile):
            let option = profile.isDefault ? "" : " --profile \(profile)"
            return
                "missing target: give [user@]host[:port] (or save one with `octunnel \(role.rawValue) up TARGET --save\(option)`)"
        case .badTarget(let text, let reason):
            return "bad target \"\(text)\": \(reason) (expected [user@]host[:port], IPv6 as [::1]:2222)"
        }
    }
}
