/// Options of `home up`'s engine: the forwards the VPS listens for, and how each connection it
/// forwards is carried at home.
public struct HomeForwardOptions: Sendable {
    public var connection: ConnectionSettings
    /// Every forward of the session, OpenCode's first (`isOpenCode`: the VPS's `--remote-host`
    /// and `--remote-port` to `--home-host` and `--home-port`), then each `-R`: one
    /// `RemoteForward` each.
    public var forwards: [Forward]
    public var keepalive: Double
    /// Answer a forwarded connection the home port cannot take with an HTTP 502 (`--no-http-errors` turns it off).
    public var httpErrors: Bool
    /// Seconds a connection to the home port may take.
    public var homeConnectTimeout: Double
    /// The authorized_keys line that allows this key to listen (`pubkey --restrict --listen`), for the exit-77 message.
    public var listenLine: String
    /// Whether a failure of the very first connection ends the run (a person is watching).
    public var exitOnFirstFailure: Bool
    /// Whether OpenCode's home end is OpenCode 2's background service, found in its files: its
    /// `RemoteForward` reads them again before each connection and follows the service when it
    /// moves (`ServiceFollower`). The other forwards never follow it.
    public var followService = false

    public init(
        connection: ConnectionSettings, forwards: [Forward], keepalive: Double = Double(Defaults.keepaliveSeconds),
        httpErrors: Bool = true, homeConnectTimeout: Double = Double(Defaults.homeConnectTimeoutSeconds),
        listenLine: String = "",
        exitOnFirstFailure: Bool = true
    ) {
        self.connection = connection
        self.forwards = forwards
        self.keepalive = keepalive
        self.httpErrors = httpErrors
        self.homeConnectTimeout = homeConnectTimeout
        self.listenLine = listenLine
        self.exitOnFirstFailure = exitOnFirstFailure
    }

    /// OpenCode's forward: where the VPS listens for it, and OpenCode here. `home up` always
    /// holds one (`ResolvedSettings.forwards`).
    public var openCode: Forward {
        get { forwards[openCodeIndex] }
        set { forwards[openCodeIndex] = newValue }
    }

    private var openCodeIndex: Int { forwards.firstIndex(where: \.isOpenCode) ?? 0 }

    /// Throws `badForward` (exit 64) unless the forwards can go together (`Forward.validate`).
    public func checkForwards(allowLAN: Bool) throws {
        try Forward.check(forwards, allowLAN: allowLAN)
    }
}
