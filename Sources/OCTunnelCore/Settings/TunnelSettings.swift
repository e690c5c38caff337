/// The laptop role's saved tunnel (`tunnel up --save`): the VPS to sign in to (the RFC's
/// SSHTunnelConfig: host, port, username), every forward as one list (OpenCode's `-L`, then the
/// others), the home's OpenCode port and the run's choices. Before profiles this was the whole
/// of `config.json`.
///
/// `config.json` holds the list as `forwardList` (`SavedForwardList`) and, beside it, the keys
/// older versions read (`remotePort`, `localPort`, `remoteHost`, `forwards`: `OldForwardKeys`),
/// a copy so that an older octunnel still reads the file. A section without `forwardList` is
/// read from those keys; one with it reads the list alone (the copy may be gone).
public struct TunnelSettings: SavedConnection, Codable, Equatable, Sendable {
    /// `tunnel`: its section in a profile of config.json.
    public static let role = Role.tunnel
    public var host: String
    public var port: Int
    public var username: String
    /// Every forward, OpenCode's first (`isOpenCode`: `-L 127.0.0.1:LOCAL:REMOTEHOST:REMOTE`;
    /// it listens on 127.0.0.1, as `--bind` is never saved), then the other `-L`s.
    public private(set) var forwards: [Forward]
    /// OpenCode's port on the home machine (`--home-port`): no end of the laptop's `-L`, which
    /// ends at the VPS, but where the printed reverse command sends it; a key of its own.
    public var homePort: Int
    /// Sign in with the ssh-agent's keys (`--agent`); absent (false) in older files.
    public var agent: Bool?
    /// The file OpenCode's password is read from (`--password-file`, an absolute path; the
    /// password itself is never saved); absent in older files.
    public var passwordFile: String?
    /// The notification choices saved (`notify`, `notifyCommand`, `notifyTimeout` keys).
    public var notifications: NotifySettings
    /// `--no-pair-port` saved: false; `--pair-port N`: the port; absent: OpenCode's own ports.
    public var pairPort: PairPortChoice?

    /// `forwards` must hold OpenCode's `-L` first, and only there.
    public init(
        host: String, port: Int, username: String, forwards: [Forward], homePort: Int, agent: Bool? = nil,
        passwordFile: String? = nil, notifications: NotifySettings = NotifySettings(), pairPort: PairPortChoice? = nil
    ) {
        precondition(
            forwards.first?.isOpenCode == true && forwards.dropFirst().allSatisfy { !$0.isOpenCode }
                && forwards.allSatisfy { $0.direction == .local },
            "a tunnel's forwards are -L, OpenCode's first")
        (self.host, self.port, self.username, self.forwards, self.homePort) = (host, port, username, forwards, homePort)
        (self.agent, self.passwordFile, self.notifications, self.pairPort) = (
            agent, passwordFile, notifications, pairPort
        )
    }

    /// The settings as older versions' keys name them (`others`: the `-L`s beside OpenCode's).
    public init(
        host: String, port: Int, username: String, remotePort: Int, localPort: Int, homePort: Int,
        remoteHost: String? = nil,
        agent: Bool? = nil, passwordFile: String? = nil, others: [Forward] = [],
        notifications: NotifySettings = NotifySettings(),
        pairPort: PairPortChoice? = nil
    ) {
        let keys = OldForwardKeys(
            direction: .local, remotePort: remotePort, remoteHost: remoteHost, localPort: localPort, others: others)
        self.init(
            host: host, port: port, username: username, forwards: keys.forwards, homePort: homePort, agent: agent,
            passwordFile: passwordFile, notifications: notifications, pairPort: pairPort)
    }

    /// Where OpenCode's forward goes on the VPS.
    public var openCodeVPSEnd: HostPort {
        get { forwards[0].vpsEnd }
        set { forwards[0].vpsEnd = newValue }
    }

    /// The laptop's port of OpenCode's forward.
    public var localPort: Int {
        get { forwards[0].listen.port }
        set { forwards[0].listen.port = newValue }
    }

    /// Checks the hosts and ports a hand-edited file may have broken.
    func validate() throws(TargetParseError) {
        try validateConnection()
        _ = try HostPort.parsePort(String(localPort), allowZero: true)
        if let problem = notifications.problem { throw TargetParseError(problem) }
    }

    private enum Key: String, CodingKey {
        case remotePort, localPort, homePort, remoteHost, forwards
        case pairPort, forwardList
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
        homePort = try keys.decode(Int.self, forKey: .homePort)
        notifications = try NotifySettings(from: decoder)
        pairPort = try keys.decodeIfPresent(PairPortChoice.self, forKey: .pairPort)
        guard let list = try keys.decodeIfPresent(SavedForwardList.self, forKey: .forwardList) else {
            let remotePort = try keys.decode(Int.self, forKey: .remotePort)
            let localPort = try keys.decode(Int.self, forKey: .localPort)
            let remoteHost = try keys.decodeIfPresent(String.self, forKey: .remoteHost)
            let texts = try keys.decodeIfPresent([String].self, forKey: .forwards)
            let others = try (texts ?? []).map { try Forward.parse($0, direction: .local, defaultBind: Defaults.bind) }
            forwards =
                OldForwardKeys(
                    direction: .local, remotePort: remotePort, remoteHost: remoteHost, localPort: localPort,
                    others: others
                ).forwards
            return
        }
        forwards = try list.forwards(.local, defaultBind: Defaults.bind)
        if forwards[0].listen.host != Defaults.bind {
            throw TargetParseError(
                "forwardList's opencode forward listens on \(forwards[0].listen.host), but --bind is never saved: "
                    + "write \(Defaults.bind) there and give --bind on the command line")
        }
    }

    /// Writes `forwardList`, then its copy in the keys older versions read.
    public func encode(to encoder: Encoder) throws {
        try SignInKeys(self).encode(to: encoder)
        var keys = encoder.container(keyedBy: Key.self)
        try keys.encode(SavedForwardList(forwards), forKey: .forwardList)
        try keys.encode(homePort, forKey: .homePort)
        try notifications.encode(to: encoder)
        try keys.encodeIfPresent(pairPort, forKey: .pairPort)
        try OldForwardKeys(copyOf: forwards).encode(to: encoder)
    }
}
