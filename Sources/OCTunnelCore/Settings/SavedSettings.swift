import Foundation

/// One profile's saved settings, a section per role: `tunnel` (the laptop, saved by
/// `tunnel up --save`) and `home` (the home machine, saved by `home up --save`). Kept in
/// `config.json` (see `ConfigFile`); either section may be absent.
public struct SavedSettings: Equatable, Sendable {
    public var tunnel: TunnelSettings?
    public var home: HomeSettings?

    public init(tunnel: TunnelSettings? = nil, home: HomeSettings? = nil) {
        self.tunnel = tunnel
        self.home = home
    }

    /// Whether the section of `role` is saved.
    public func has(_ role: Role) -> Bool {
        switch role {
        case .tunnel: return tunnel != nil
        case .home: return home != nil
        }
    }

    /// The settings of `profile`, nil when that profile has none; a file that is not valid is
    /// an error (exit 65), never replaced. A file saved by an older version is written back in
    /// this version's shape (`ConfigFile.load`).
    public static func load(from directory: OctunnelDirectory, profile: ProfileName = .default) throws -> SavedSettings?
    {
        try ConfigFile(directory: directory).load()?.settings(of: profile)
    }

    /// What `config show` prints of this profile: each section as `config.json` holds it (the
    /// same encoder, so every saved field shows), an unsaved `remoteHost` as its default
    /// (127.0.0.1). The password file's path shows, never a password (none is saved).
    public var shown: [String: Any] {
        var object: [String: Any] = [:]
        let sections: [(Role, (any Encodable)?)] = [(.tunnel, tunnel), (.home, home)]
        for (role, section) in sections {
            guard let section, var shown = (try? JSONValue(encoding: section))?.members else { continue }
            shown["remoteHost"] = shown["remoteHost"] ?? .string(Defaults.remoteHost)
            object[role.rawValue] = shown.foundation
        }
        return object
    }

    /// Every saved profile, the default first, then by name; empty when nothing is saved.
    public static func all(in directory: OctunnelDirectory) throws -> [(profile: ProfileName, settings: SavedSettings)]
    {
        guard let contents = try ConfigFile(directory: directory).load() else { return [] }
        var result: [(profile: ProfileName, settings: SavedSettings)] = []
        for profile in contents.profiles.sorted() {
            if let settings = try contents.settings(of: profile) { result.append((profile, settings)) }
        }
        return result
    }
}

enum SettingsChecks {
    static func host(_ host: String) throws(TargetParseError) {
        _ = try HostPort.parse(host.contains(":") ? "[\(host)]" : host)
    }
}
