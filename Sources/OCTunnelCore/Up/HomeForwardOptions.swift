/// Options of `home up`'s forward: where the VPS listens (`connection.remoteHost:remotePort`)
/// and where OpenCode listens on this machine.
public struct HomeForwardOptions: Sendable {
    public var connection: ConnectionSettings
    /// OpenCode on the home machine (`--home-host`, `--home-port`).
    public var home: HostPort
    public var keepalive: Double
    /// Answer a forwarded connection the home port cannot take with an HTTP 502 (`--no-http-errors` turns it off).
    public var httpErrors: Bool
    /// Seconds a connection to the home port may take.
    public var homeConnectTimeout: Double
    /// The authorized_keys line that allows this key to listen (`pubkey --restrict --listen`), for the exit-77 message.
    public var listenLine: String
    /// Whether a failure of the very first connection ends the run (a person is watching).
    public var exitOnFirstFailure: Bool
    /// Where the VPS listens for this forward (OpenCode's: `connection.remoteHost:remotePort`).
    public var remote: HostPort
    /// The forwards beside OpenCode's (`-R`, the app the agent builds), carried by the same session.
    public var additionalForwards: [Forward] = []
    /// Whether OpenCode's home end is OpenCode 2's background service, found in its files:
    /// `RemoteForward` reads them again before each connection and follows the service when it
    /// moves (`ServiceFollower`).
    public var followService = false
    /// This forward's place in the session's list (0: OpenCode's): the port-reclaim program's
    /// verbs name the listen of every other one (`PortReclaimProgram.command`).
    public var forwardIndex = 0

    public init(connection: ConnectionSettings, home: HostPort = HostPort(host: Defaults.homeHost, port: Defaults.homePort),
                keepalive: Double = Double(Defaults.keepaliveSeconds), httpErrors: Bool = true,
                homeConnectTimeout: Double = Double(Defaults.homeConnectTimeoutSeconds), listenLine: String = "", exitOnFirstFailure: Bool = true) {
        self.connection = connection
        self.home = home
        self.keepalive = keepalive
        self.httpErrors = httpErrors
        self.homeConnectTimeout = homeConnectTimeout
        self.listenLine = listenLine
        self.exitOnFirstFailure = exitOnFirstFailure
        remote = HostPort(host: connection.remoteHost, port: connection.remotePort)
    }

    /// The OpenCode forward: the VPS's `remote` to `home` here.
    public var openCodeForward: Forward { Forward(direction: .remote, listen: remote, target: home, isOpenCode: true) }

    /// Every forward of the session, OpenCode's first.
    public var forwards: [Forward] { [openCodeForward] + additionalForwards }

    /// These options for the `index`th of `forwards`: its VPS listen and home address.
    func one(_ index: Int) -> HomeForwardOptions {
        let forward = forwards[index]
        var options = self
        options.remote = forward.listen
        options.home = forward.target
        options.forwardIndex = index
        options.additionalForwards = []
        options.followService = followService && index == 0
        return options
    }

    /// Throws `badForward` (exit 64) unless the forwards can go together (`Forward.validate`).
    public func checkForwards(allowLAN: Bool) throws(OCTunnelError) {
        try Forward.check(forwards, allowLAN: allowLAN)
    }
}
