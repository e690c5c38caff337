import Foundation

/// A forward that cannot listen, is refused, or finds nothing behind it (at the VPS or at home).
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum ForwardError: OCTunnelFailure, Equatable {
    /// The forward itself, at the VPS; a local listen is in "local port", what lies behind it at home in "home".
    public static let roomLayer = "forward"

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

    private static let localPort = "local port"
    private static let home = "home"

    /// Each case's exit code, one sentence with the next step, and its layer where not the forward's.
    public var details: FailureDetails {
        switch self {
        case .localPortInUse(let bind, let port):
            FailureDetails(
                .unavailable,
                """
                local port \(Self.endpoint(bind, port)) is already in use: stop what uses it, \
                or pick another with --local-port (0 picks a free one).
                """, layer: Self.localPort)
        case .cannotListen(let bind, let port, let reason):
            FailureDetails(
                .unavailable, "cannot listen on \(Self.endpoint(bind, port)): \(reason).", layer: Self.localPort)
        case .badForward(let reason):
            FailureDetails(.usage, reason, layer: Self.localPort)
        case .nothingListeningBehindVPS(let remoteHost, let remotePort, let reverseCommand):
            FailureDetails(
                .unavailable,
                """
                nothing listens on VPS \(Self.endpoint(remoteHost, remotePort)): the home machine's reverse tunnel \
                is down. Start it on the home machine:
                  \(reverseCommand)
                """)
        case .forwardRefused(let remoteHost, let remotePort, let reason):
            FailureDetails(
                .permission, Self.forwardRefusedWords(Self.endpoint(remoteHost, remotePort), remotePort, reason))
        case .listenForbidden(let remoteHost, let remotePort, let reason, let listenLine):
            FailureDetails(
                .permission,
                Self.listenForbiddenWords(Self.endpoint(remoteHost, remotePort), reason: reason, listenLine: listenLine)
            )
        case .staleForward(let remoteHost, let remotePort, let seconds):
            FailureDetails(.unavailable, Self.staleForwardWords(Self.endpoint(remoteHost, remotePort), seconds))
        case .nothingListeningAtHome(let remote, let home, let detail):
            FailureDetails(
                .unavailable,
                """
                VPS \(remote) reaches the home machine, but nothing listens at home on \(home.port) (\(detail)): \
                start the app there, on \(home)
                """, layer: Self.home)
        case .openCodeNotRunningAtHome(let home, let detail, let fix):
            FailureDetails(
                .unavailable,
                "the home machine is reachable but OpenCode is not running there (\(home)): \(detail); \(fix)",
                layer: Self.home)
        }
    }

    private static func forwardRefusedWords(_ endpoint: String, _ remotePort: Int, _ reason: String) -> String {
        """
        the VPS refused to forward to \(endpoint) (\(reason)): its sshd forbids it for this key. \
        On the VPS, allow it: `AllowTcpForwarding yes` (or `local`) in sshd_config, and a permitopen="\(endpoint)" \
        in the key's authorized_keys line (`octunnel pubkey --restrict --remote-port \(remotePort)` prints it).
        """
    }

    private static func listenForbiddenWords(_ endpoint: String, reason: String, listenLine: String) -> String {
        let said = OutsideText.shown(reason.trimmingCharacters(in: .whitespacesAndNewlines), limit: 255)
        return """
            the VPS forbids this key to listen on \(endpoint) (sshd: \(said)). On the VPS, allow it: \
            `AllowTcpForwarding yes` (or `remote`) in sshd_config, and this line in authorized_keys \
            (`octunnel pubkey --restrict --listen`):
              \(listenLine)
            """
    }

    private static func staleForwardWords(_ endpoint: String, _ seconds: Int) -> String {
        """
        VPS \(endpoint) accepts connections but nothing answered within \(seconds) s: \
        a forward held by a home session that died without closing. Restart `octunnel home up` \
        on the home machine: with the authorized_keys line `octunnel pubkey --restrict --listen` prints, \
        it ends that dead session and takes the port back within seconds. \
        With an older line it waits for the VPS's sshd to notice: `ClientAliveInterval 15` and \
        `ClientAliveCountMax 3` in sshd_config do that within 45 s only while nothing connects \
        to the port (this check and every app retrying count); otherwise TCP gives up after 15-30 min.
        """
    }
}
