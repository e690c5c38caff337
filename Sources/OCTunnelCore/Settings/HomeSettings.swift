/// The home role's saved reverse tunnel (`home up --save`): the VPS to sign in to and every
/// forward as one list (OpenCode's `-R`, from where the VPS listens to OpenCode on this
/// machine, then the others).
///
/// `config.json` holds the list as `forwardList` (`SavedForwardList`) and, beside it, the keys
/// older versions read (`remotePort`, `homePort`, `remoteHost`, `homeHost`, `forwards`:
/// `OldForwardKeys`), a copy so that an older octunnel still reads the file. A section without
/// `forwardList` is read from those keys; one with it reads the list alone (the copy may be gone).
public struct HomeSettings: SavedConnection, Codable, Equatable, Sendable {
    /// `home`: its section in a profile of config.json.
    public static let role = Role.home
    public var host: String
    public var port: Int
    public var username: String
    /// Every forward, OpenCode's first (`isOpenCode`: `-R REMOTEHOST:REMOTE:HOMEHOST:HOME`),
    /// then the other `-R`s.
    public private(set) var forwards: [Forward]
    /// Sign in with the ssh-agent's keys (`--agent`); absent means false.
    public var agent: Bool?
    /// The file OpenCode's password is read from (`--password-file`, an absolute path); absent: none.
    public var passwordFile: String?
    /// The notification choices saved (`home up --save`: the `notify`, `notifyCommand`,
    /// `notifyTimeout` keys, as the tunnel's); absent: notifications on, no command.
    public var notifications: NotifySettings

    /// `forwards` must hold OpenCode's `-R` first, and only there.
    public init(
        host: String, port: Int, username: String, forwards: [Forward], agent: Bool? = nil, passwordFile: String? = nil,
        notifications: NotifySettings = NotifySettings()
    ) {
        precondition(
            forwards.first?.isOpenCode == true && forwards.dropFirst().allSatisfy { !$0.isOpenCode }
                && forwards.allSatisfy { $0.direction == .remote },
            "a home's forwards are -R, OpenCode's first")
        (self.host, self.port, self.username, self.forwards) = (host, port, username, forwards)
        (self.agent, self.passwordFile, self.notifications) = (agent, passwordFile, notifications)
    }

    /// The settings as older versions' keys name them (`others`: the `-R`s beside OpenCode's).
    public init(
        host: String, port: Int, username: String, remotePort: Int, homePort: Int, remoteHost: String? = nil,
        homeHost: String? = nil, agent: Bool? = nil, passwordFile: String? = nil, others: [Forward] = []
    ) {
        let keys = OldForwardKeys(
            direction: .remote, remotePort: remotePort, remoteHost: remoteHost, homePort: homePort,
            homeHost: homeHost, others: others)
        self.init(
            host: host, port: port, username: username, forwards: keys.forwards, agent: agent,
            passwordFile: passwordFile)
    }

    /// Where OpenCode's forward listens on the VPS.
    public var openCodeVPSEnd: HostPort {
        get { forwards[0].vpsEnd }
        set { forwards[0].vpsEnd = newValue }
    }

    /// OpenCode's port on this machine.
    public var homePort: Int {
        get { forwards[0].target.port }
        set { forwards[0].target.port = newValue }
    }

    /// The address OpenCode listens on at home (`--home-host`); setting nil sets `Defaults.homeHost`.
    public var homeHost: String? {
        get { forwards[0].target.host }
        set { forwards[0].target.host = newValue ?? Defaults.homeHost }
    }

    func validate() throws(TargetParseError) {
        try validateConnection(otherHosts: [homeHost])
        if let problem = notifications.problem { throw TargetParseError(problem) }
    }

    private enum Key: String, CodingKey {
        case remotePort, homePort, remoteHost, homeHost, forwards, forwardList
    }

    /// Reads `forwardList` when the section has it (its copy for older versions not read: the
    /// list wins, `OldForwardKeys.Saved` says where they differ), else the keys older versions
    /// saved. A forward that does not parse is a `TargetParseError`.
    public init(from decoder: Decoder) throws {
        let keys = try decoder.container(keyedBy: Key.self)
        let signIn = try SignInKeys(from: decoder)
        (host, port, username, agent, passwordFile) = (
            signIn.host, signIn.port, signIn.username, signIn.agent, signIn.passwordFile
        )
        notifications = try NotifySettings(from: decoder)
        if let list = try keys.decodeIfPresent(SavedForwardList.self, forKey: .forwardList) {
            forwards = try list.forwards(.remote, defaultBind: Defaults.remoteHost)
            return
        }
        let remotePort = try keys.decode(Int.self, forKey: .remotePort)
        let homePort = try keys.decode(Int.self, forKey: .homePort)
        let remoteHost = try keys.decodeIfPresent(String.self, forKey: .remoteHost)
        let homeHost = try keys.decodeIfPresent(String.self, forKey: .homeHost)
        let texts = try keys.decodeIfPresent([String].self, forKey: .forwards)
        let others = try (texts ?? []).map {
            try Forward.parse($0, direction: .remote, defaultBind: Defaults.remoteHost)
        }
        forwards =
            OldForwardKeys(
                direction: .remote, remotePort: remotePort, remoteHost: remoteHost, homePort: homePort,
                homeHost: homeHost, others: others
            ).forwards
    }

    /// Writes `forwardList`, then its copy in the keys older versions read.
    public func encode(to encoder: Encoder) throws {
        try SignInKeys(self).encode(to: encoder)
        var keys = encoder.container(keyedBy: Key.self)
        try keys.encode(SavedForwardList(forwards), forKey: .forwardList)
        try notifications.encode(to: encoder)
        try OldForwardKeys(copyOf: forwards).encode(to: encoder)
    }
}
