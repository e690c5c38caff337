import Foundation

/// Options of the forwarding event loop.
public struct TunnelOptions: Sendable {
    public var connection: ConnectionSettings
    /// Every forward of the session, OpenCode's first (`isOpenCode`), then each `-L` (the app
    /// the agent builds): one `LocalForward` each.
    public var forwards: [Forward]
    public var keepalive: Double
    /// OpenCode's port on the home machine: the reverse command this side prints forwards to it.
    public var homePort: Int
    /// Whether a failure of the very first connection ends the run (a person is watching).
    public var exitOnFirstFailure: Bool
    /// Whether a refusal that ends by itself (a penalizing sshd) is waited out all the same;
    /// `tunnel check` reports it instead.
    public var waitsOutPenalty = true
    /// How many direct-tcpip channels to keep open ahead of need: nil follows demand (1-32),
    /// 0 turns the pool off.
    public var warm: Int?
    /// Also listen on ::1, on the same port as a forward listening on 127.0.0.1 (`tunnel up`
    /// without --bind: clients that resolve `localhost` to ::1 first find the tunnel there, as
    /// with `ssh -L`). A machine without IPv6 loopback is skipped quietly.
    public var alsoIPv6Loopback = false
    /// Listen on the port OpenCode 2's pair links name too (`PairPort`): OpenCode's own ports by
    /// themselves, the one `--pair-port N` gives, or none (`--no-pair-port`).
    public var pairPort = PairPortChoice.automatic

    public init(
        connection: ConnectionSettings, forwards: [Forward], keepalive: Double = Double(Defaults.keepaliveSeconds),
        homePort: Int = Defaults.homePort, exitOnFirstFailure: Bool = true, warm: Int? = nil
    ) {
        self.connection = connection
        self.forwards = forwards
        self.keepalive = keepalive
        self.homePort = homePort
        self.exitOnFirstFailure = exitOnFirstFailure
        self.warm = warm
    }

    /// OpenCode's forward: where this machine listens for it, and OpenCode's port as the VPS
    /// sees it. `tunnel up` and `tunnel check` always hold one (`ResolvedSettings.forwards`).
    public var openCode: Forward { forwards.first(where: \.isOpenCode) ?? forwards[0] }

    /// Throws `badForward` (exit 64) unless the forwards can go together (`Forward.validate`).
    public func checkForwards(allowLAN: Bool) throws {
        try Forward.check(forwards, allowLAN: allowLAN)
    }

    /// What the home machine runs so that something listens behind `forward`'s VPS port:
    /// OpenCode's goes to `homePort`; another one's home port is taken to be its local one (3000
    /// here, 3000 at home), as a dev server's usually is.
    public func reverseCommand(for forward: Forward) -> String {
        ReverseCommand(target: connection.target, laptopForwards: [forward], homePort: homePort).render(.ssh)
    }
}
