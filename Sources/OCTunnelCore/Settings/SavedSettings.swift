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
    /// an error (exit 65), never replaced.
    public static func load(from home: OctunnelDirectory, profile: ProfileName = .default) throws(OCTunnelError) -> SavedSettings? {
        try ConfigFile(home: home).read()?.settings(of: profile)
    }

    /// What `config show` prints of this profile: each section as `config.json` holds it (the
    /// same encoder, so every saved field shows), an unsaved `remoteHost` as its default
    /// (127.0.0.1). The password file's path shows, never a password (none is saved).
    public var shown: [String: Any] {
        var object: [String: Any] = [:]
        let sections: [(Role, (any Encodable)?)] = [(.tunnel, tunnel), (.home, home)]
        for (role, section) in sections {
            guard let section, var shown = (try? ConfigFile.object(section)) as? [String: Any] else { continue }
            shown["remoteHost"] = shown["remoteHost"] ?? Defaults.remoteHost
            object[role.rawValue] = shown
        }
        return object
    }

    /// Every saved profile, the default first, then by name; empty when nothing is saved.
    public static func all(in home: OctunnelDirectory) throws(OCTunnelError) -> [(profile: ProfileName, settings: SavedSettings)] {
        guard let contents = try ConfigFile(home: home).read() else { return [] }
        var result: [(profile: ProfileName, settings: SavedSettings)] = []
        for profile in contents.profiles.sorted() {
            if let settings = try contents.settings(of: profile) { result.append((profile, settings)) }
        }
        return result
    }
}

/// The laptop role's saved tunnel: the RFC's SSHTunnelConfig (host, port, username, remotePort)
/// plus the local and home ports. Before profiles this was the whole of `config.json`.
public struct TunnelSettings: SavedConnection, Codable, Equatable, Sendable {
    public var host: String
    public var port: Int
    public var username: String
    public var remotePort: Int
    public var localPort: Int
    public var homePort: Int
    /// The VPS address the reverse tunnel listens on; absent (127.0.0.1) in files from before it was saved.
    public var remoteHost: String?
    /// Sign in with the ssh-agent's keys (`--agent`); absent (false) in older files.
    public var agent: Bool?
    /// The file OpenCode's password is read from (`--password-file`, an absolute path; the
    /// password itself is never saved); absent in older files.
    public var passwordFile: String?
    /// The forwards beside OpenCode's (`-L`), as `ssh -L` writes them
    /// (`127.0.0.1:3000:127.0.0.1:18081`); absent: none.
    public var forwards: [String]?
    /// `--no-notify` saved: false; absent: notifications on.
    public var notify: Bool?
    /// `--notify-command`, as typed; absent: none.
    public var notifyCommand: String?
    /// `--notify-timeout` in seconds when not the default; absent: the default.
    public var notifyTimeout: Int?
    /// `--no-pair-port` saved: false; `--pair-port N`: the port; absent: OpenCode's own ports.
    public var pairPort: PairPortChoice?

    /// Checks the hosts and ports a hand-edited file may have broken.
    func validate() throws(TargetParseError) {
        try validateConnection()
        _ = try HostPort.parsePort(String(localPort), allowZero: true)
        if let notifyTimeout, !NotifyOptions.timeoutRange.contains(notifyTimeout) {
            throw TargetParseError("notifyTimeout \(notifyTimeout) is not \(NotifyOptions.timeoutRange.lowerBound)-\(NotifyOptions.timeoutRange.upperBound) seconds")
        }
        if notifyCommand?.isEmpty == true { throw TargetParseError("notifyCommand is empty") }
        for text in forwards ?? [] { _ = try Forward.parse(text, direction: .local, defaultBind: Defaults.bind) }
    }

    /// `forwards`, parsed (a file `validate` accepted parses).
    var savedForwards: [Forward]? {
        forwards.map { $0.compactMap { try? Forward.parse($0, direction: .local, defaultBind: Defaults.bind) } }
    }

    /// Saves this as `profile`'s tunnel section, keeping every other profile and section.
    public func save(to home: OctunnelDirectory, profile: ProfileName = .default) throws(OCTunnelError) {
        try ConfigFile(home: home).save(self, role: .tunnel, profile: profile)
    }
}

/// The home role's saved reverse tunnel (`home up --save`): the VPS to sign in to, where the
/// VPS listens and the OpenCode port on this machine.
public struct HomeSettings: SavedConnection, Codable, Equatable, Sendable {
    public var host: String
    public var port: Int
    public var username: String
    public var remotePort: Int
    public var homePort: Int
    /// The VPS address the reverse tunnel listens on; absent means 127.0.0.1.
    public var remoteHost: String?
    /// The address OpenCode listens on at home (`--home-host`); absent means 127.0.0.1.
    public var homeHost: String?
    /// Sign in with the ssh-agent's keys (`--agent`); absent means false.
    public var agent: Bool?
    /// The file OpenCode's password is read from (`--password-file`, an absolute path); absent: none.
    public var passwordFile: String?
    /// The forwards beside OpenCode's (`-R`), as `ssh -R` writes them
    /// (`127.0.0.1:18081:127.0.0.1:3000`); absent: none.
    public var forwards: [String]?

    func validate() throws(TargetParseError) {
        try validateConnection(otherHosts: [homeHost])
        for text in forwards ?? [] { _ = try Forward.parse(text, direction: .remote, defaultBind: Defaults.remoteHost) }
    }

    /// `forwards`, parsed (a file `validate` accepted parses).
    var savedForwards: [Forward]? {
        forwards.map { $0.compactMap { try? Forward.parse($0, direction: .remote, defaultBind: Defaults.remoteHost) } }
    }

    /// Saves this as `profile`'s home section, keeping every other profile and section.
    public func save(to home: OctunnelDirectory, profile: ProfileName = .default) throws(OCTunnelError) {
        try ConfigFile(home: home).save(self, role: .home, profile: profile)
    }
}

enum SettingsChecks {
    static func host(_ host: String) throws(TargetParseError) {
        _ = try HostPort.parse(host.contains(":") ? "[\(host)]" : host)
    }
}
