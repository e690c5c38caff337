/// What the command line said about the target, the ports and signing in (nil: not given),
/// before the saved settings, ~/.ssh/config and `Defaults` have their say
/// (`ResolvedSettings.resolve`).
public struct SettingsFlags: Sendable {
    /// The profile whose saved settings are read (`--profile`, else `$OCTUNNEL_PROFILE`).
    public var profile: ProfileName
    /// The typed target, `[user@]host[:port]` or a Host of ~/.ssh/config.
    public var target: String?
    public var remoteHost: String?
    public var remotePort: Int?
    public var homePort: Int?
    /// `tunnel up --local-port` (`tunnel check` asks for 0).
    public var localPort: Int?
    /// `tunnel up --bind`.
    public var bind: String?
    /// `home up --home-host`.
    public var homeHost: String?
    /// `tunnel up -L` / `home up -R` (the forwards beside OpenCode's); nil: none given, the saved ones apply.
    public var forwards: [Forward]?
    /// `--identity`.
    public var identity: String?
    /// `--agent`.
    public var agent: Bool
    /// `--connect-timeout`, in seconds (never saved).
    public var connectTimeout: Int
    /// `--expect-fingerprint` (never saved).
    public var expectFingerprint: String?
    /// Trust a new VPS on first use (`--no-trust-new` turns it off; never saved).
    public var trustNew: Bool
    /// Look a new VPS up in OpenSSH's known_hosts (`--no-openssh-known-hosts`; never saved).
    public var openSSHKnownHosts: Bool
    /// `tunnel up` and `home up`'s `--notify`/`--no-notify`, `--notify-command`, `--notify-timeout`.
    public var notifications = NotifySettings()
    /// `tunnel up --pair-port auto|N` / `--no-pair-port`.
    public var pairPort: PairPortChoice?

    public init(
        profile: ProfileName = .default, target: String? = nil, remoteHost: String? = nil, remotePort: Int? = nil,
        homePort: Int? = nil, localPort: Int? = nil, bind: String? = nil, homeHost: String? = nil,
        identity: String? = nil,
        agent: Bool = false, connectTimeout: Int = Defaults.connectTimeoutSeconds, expectFingerprint: String? = nil,
        trustNew: Bool = true, openSSHKnownHosts: Bool = true
    ) {
        self.profile = profile
        self.target = target
        self.remoteHost = remoteHost
        self.remotePort = remotePort
        self.homePort = homePort
        self.localPort = localPort
        self.bind = bind
        self.homeHost = homeHost
        self.identity = identity
        self.agent = agent
        self.connectTimeout = connectTimeout
        self.expectFingerprint = expectFingerprint
        self.trustNew = trustNew
        self.openSSHKnownHosts = openSSHKnownHosts
    }
}
