/// Which end of the tunnel a machine plays: the laptop (`tunnel up`, forwarding a local port to
/// the VPS) or the home machine (`home up`, keeping the reverse tunnel from the VPS to OpenCode).
/// Saved settings, service units and status sockets are kept per role and profile.
public enum Role: String, CaseIterable, Codable, Sendable {
    case tunnel
    case home

    /// The command that saves this role's settings, for messages.
    public var saveCommand: String {
        switch self {
        case .tunnel: return "octunnel tunnel up TARGET --save"
        case .home: return "octunnel home up TARGET --save"
        }
    }

    /// What runs this role, as words after the binary's path (`tunnel up`, `home up`).
    public var upCommand: [String] { [rawValue, "up"] }

    /// `tunnel` for the default profile, `tunnel-work` for profile `work`: the stem of unit names,
    /// launchd labels, log files and runtime paths. Unambiguous: a role never contains `-`.
    public func instanceName(profile: ProfileName) -> String {
        profile.isDefault ? rawValue : "\(rawValue)-\(profile.rawValue)"
    }
}
