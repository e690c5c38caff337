/// What both roles' saved sections share: the VPS to sign in to, where it listens, the
/// OpenCode port at home and how to sign in.
public protocol SavedConnection: Encodable {
    /// The role whose section this is.
    static var role: Role { get }
    var host: String { get }
    var port: Int { get }
    var username: String { get }
    var homePort: Int { get }
    /// Every forward, OpenCode's first, then the other `-L`s or `-R`s.
    var forwards: [Forward] { get }
    /// OpenCode's forward's end on the VPS: where the laptop's `-L` goes, where the home's `-R`
    /// listens (`remoteHost:remotePort`).
    var openCodeVPSEnd: HostPort { get set }
    /// Sign in with the ssh-agent's keys (`--agent`); absent means false.
    var agent: Bool? { get }
    /// The file OpenCode's password is read from (`--password-file`); absent: none.
    var passwordFile: String? { get }
}

extension SavedConnection {
    public var target: SSHTarget { SSHTarget(user: username, host: host, port: port) }

    /// OpenCode's forward.
    public var openCode: Forward { forwards[0] }

    /// The forwards beside OpenCode's.
    public var others: [Forward] { Array(forwards.dropFirst()) }

    /// The VPS port of OpenCode's forward.
    public var remotePort: Int {
        get { openCodeVPSEnd.port }
        set { openCodeVPSEnd.port = newValue }
    }

    /// The VPS address of OpenCode's forward; setting nil sets `Defaults.remoteHost`.
    public var remoteHost: String? {
        get { openCodeVPSEnd.host }
        set { openCodeVPSEnd.host = newValue ?? Defaults.remoteHost }
    }

    /// Saves this as `profile`'s section of its role, keeping every other profile and section.
    public func save(to directory: OctunnelDirectory, profile: ProfileName = .default) throws {
        try ConfigFile(directory: directory).save(self, role: Self.role, profile: profile)
    }

    /// Checks the user, the hosts (the VPS, its listening address, then `otherHosts`) and the
    /// ports a hand-edited file may have broken.
    func validateConnection(otherHosts: [String?] = []) throws(TargetParseError) {
        try SSHTarget.validateUser(username)
        try SettingsChecks.host(host)
        for extra in [remoteHost] + otherHosts {
            if let extra { try SettingsChecks.host(extra) }
        }
        for port in [port, remotePort, homePort] { _ = try HostPort.parsePort(String(port)) }
    }
}

/// The keys both sections save alike: the VPS and its user, how to sign in, OpenCode's password file.
struct SignInKeys: Codable {
    let host: String
    let port: Int
    let username: String
    let agent: Bool?
    let passwordFile: String?
}

extension SignInKeys {
    init(_ settings: some SavedConnection) {
        (host, port, username, agent, passwordFile) = (
            settings.host, settings.port, settings.username, settings.agent, settings.passwordFile
        )
    }
}
