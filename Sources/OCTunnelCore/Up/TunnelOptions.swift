import Foundation

/// Options of the forwarding event loop.
public struct TunnelOptions: Sendable {
    public var connection: ConnectionSettings
    public var bind: String
    public var localPort: Int
    public var keepalive: Double
    public var homePort: Int
    /// Whether a failure of the very first connection ends the run (a person is watching).
    public var exitOnFirstFailure: Bool
    /// Whether a refusal that ends by itself (a penalizing sshd) is waited out all the same;
    /// `tunnel check` reports it instead.
    public var waitsOutPenalty = true
    /// How many direct-tcpip channels to keep open ahead of need: nil follows demand (1-32),
    /// 0 turns the pool off.
    public var warm: Int?
    /// Also listen on ::1, on the same port as `bind` (`tunnel up` without --bind: clients
    /// that resolve `localhost` to ::1 first find the tunnel there, as with `ssh -L`). A
    /// machine without IPv6 loopback is skipped quietly.
    public var alsoIPv6Loopback = false
    /// The forwards beside OpenCode's (`-L`, the app the agent builds), carried by the same session.
    public var additionalForwards: [Forward] = []
    /// Listen on the port OpenCode 2's pair links name too (`PairPort`): OpenCode's own ports by
    /// themselves, the one `--pair-port N` gives, or none (`--no-pair-port`).
    public var pairPort = PairPortChoice.automatic

    public init(connection: ConnectionSettings, bind: String = Defaults.bind, localPort: Int = Defaults.localPort,
                keepalive: Double = Double(Defaults.keepaliveSeconds), homePort: Int = Defaults.homePort, exitOnFirstFailure: Bool = true, warm: Int? = nil) {
        self.connection = connection
        self.bind = bind
        self.localPort = localPort
        self.keepalive = keepalive
        self.homePort = homePort
        self.exitOnFirstFailure = exitOnFirstFailure
        self.warm = warm
    }

    public var remote: HostPort { HostPort(host: connection.remoteHost, port: connection.remotePort) }

    /// The OpenCode forward: `bind`:`localPort` here to `remote` as the VPS sees it.
    public var openCodeForward: Forward {
        Forward(direction: .local, listen: HostPort(host: bind, port: localPort), target: remote, isOpenCode: true)
    }

    /// Every forward of the session, OpenCode's first.
    public var forwards: [Forward] { [openCodeForward] + additionalForwards }

    /// Throws `badForward` (exit 64) unless the forwards can go together (`Forward.validate`).
    public func checkForwards(allowLAN: Bool) throws(OCTunnelError) {
        try Forward.check(forwards, allowLAN: allowLAN)
    }

    /// What the home machine runs so that something listens behind `forward`'s VPS port: for
    /// another forward than OpenCode's, its home port is taken to be its local one (3000 here,
    /// 3000 at home), as a dev server's usually is.
    public func reverseCommand(for forward: Forward) -> String {
        guard !forward.isOpenCode else { return reverseCommand }
        let home = forward.homeSide
        return ReverseCommand(target: connection.target, remoteHost: home.listen.host, remotePort: home.listen.port,
                              homePort: home.target.port).render(.ssh)
    }

    public var reverseCommand: String {
        ReverseCommand(target: connection.target, remoteHost: connection.remoteHost, remotePort: connection.remotePort,
                       homePort: homePort).render(.ssh)
    }
}
