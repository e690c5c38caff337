import Foundation

/// A forward that cannot listen, is refused, or finds nothing behind it (at the VPS or at home).
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum ForwardError: OCTunnelFailure, Equatable {
    case localPortInUse(bind: String, port: Int)
    case cannotListen(bind: String, port: Int, reason: String)
    /// Forwards that cannot go together (a port twice, a LAN address without --allow-lan): exit 64.
    case badForward(reason: String)
    case nothingListeningBehindVPS(remoteHost: String, remotePort: Int, reverseCommand: String)
    case forwardRefused(remoteHost: String, remotePort: Int, reason: String)
    /// `home up`: the VPS's sshd forbids this key to listen (sshd's own words in `reason`).
    case listenForbidden(remoteHost: String, remotePort: Int, reason: String, listenLine: String)
    /// The VPS port accepts but nothing ever answers: a forward held by a dead home session.
    case staleForward(remoteHost: String, remotePort: Int, seconds: Int)
    /// A forward beside OpenCode's reached the home machine, and nothing listens there on its port.
    case nothingListeningAtHome(remote: HostPort, home: HostPort, detail: String)
    /// The home machine answered through the tunnel (`HomeGatewayAnswer`) but OpenCode is not running there.
    case openCodeNotRunningAtHome(home: HostPort, detail: String, fix: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .localPortInUse, .cannotListen, .nothingListeningBehindVPS, .staleForward, .nothingListeningAtHome,
            .openCodeNotRunningAtHome:
            .unavailable
        case .badForward: .usage
        case .forwardRefused, .listenForbidden: .permission
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        switch self {
        case .localPortInUse, .cannotListen, .badForward: "local port"
        case .nothingListeningBehindVPS, .forwardRefused, .listenForbidden, .staleForward: "forward"
        case .nothingListeningAtHome, .openCodeNotRunningAtHome: "home"
        }
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .localPortInUse(let bind, let port):
            return "local port \(Self.endpoint(bind, port)) is already in "
                + "use: stop what uses it, or pick another with --local-port (0 picks a free one)."
        case .cannotListen(let bind, let port, let reason):
            return "cannot listen on \(Self.endpoint(bind, port)): \(reason)."
        case .badForward(let reason):
            return reason
        case .nothingListeningBehindVPS(let remoteHost, let remotePort, let reverseCommand):
            return "nothing listens on VPS \(Self.endpoint(remoteHost, remotePort))"
                + ": the home machine's reverse tunnel is " + "down. Start it on the home machine:\n  \(reverseCommand)"
        case .forwardRefused(let remoteHost, let remotePort, let reason):
            return [
                "the VPS refused to forward to \(Self.endpoint(remoteHost, remotePort)) ",
                "(\(reason)): its sshd forbids it for this key. On the VPS, ",
                "allow it: `AllowTcpForwarding yes` (or `local`) in sshd_config, ",
                "and a permitopen=\"\(Self.endpoint(remoteHost, remotePort))\" ",
                "in the key's authorized_keys line (`octunnel pubkey --restrict --remote-port \(remotePort)` prints it).",
            ].joined()
        case .listenForbidden(let remoteHost, let remotePort, let reason, let listenLine):
            return [
                "the VPS forbids this key to listen on \(Self.endpoint(remoteHost, remotePort)) ",
                "(sshd: \(OutsideText.shown(reason.trimmingCharacters(in: .whitespacesAndNewlines), limit: 255))",
                "). On the VPS, allow it: `AllowTcpForwarding yes` (or ",
                "`remote`) in sshd_config, and this line in authorized_keys ",
                "(`octunnel pubkey --restrict --listen`):\n  \(listenLine)",
            ].joined()
        case .staleForward(let remoteHost, let remotePort, let seconds):
            return [
                "VPS \(Self.endpoint(remoteHost, remotePort)) accepts connections ",
                "but nothing answered within \(seconds) s: a forward held ",
                "by a home session that died without closing. Restart `octunnel ",
                "home up` on the home machine: with the authorized_keys ",
                "line `octunnel pubkey --restrict --listen` prints, it ends ",
                "that dead session and takes the port back within seconds. ",
                "With an older line it waits for the VPS's sshd to notice: ",
                "`ClientAliveInterval 15` and `ClientAliveCountMax 3` in ",
                "sshd_config do that within 45 s only " + "while nothing connects to the port (this "
                    + "check and every app retrying count); otherwise TCP gives up after 15-30 min.",
            ].joined()
        case .nothingListeningAtHome(let remote, let home, let detail):
            return "VPS \(remote) reaches the home machine, but nothing "
                + "listens at home on \(home.port) (\(detail)): start the app there, on \(home)"
        case .openCodeNotRunningAtHome(let home, let detail, let fix):
            return "the home machine is reachable but OpenCode is not running there (\(home)): \(detail); \(fix)"
        }
    }
}
