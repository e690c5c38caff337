import Foundation

/// Reaching the VPS: the name, the TCP connection and the SSH handshake.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum ConnectError: OCTunnelFailure, Equatable {
    /// The SSH handshake; the name and the TCP connection before it are "resolve" and "tcp".
    public static let roomLayer = "ssh"

    case cannotResolve(host: String, reason: String)
    case connectionRefused(host: String, port: Int)
    case connectTimeout(host: String, port: Int, seconds: Int)
    /// A connect failed otherwise; `noRoute`: this machine has no route there at all (offline).
    case unreachable(host: String, port: Int, reason: String, noRoute: Bool = false)
    case notSSH(host: String, port: Int, detail: String)
    /// The server closed the connection before its SSH greeting: an sshd penalizing this
    /// address (PerSourcePenalties, OpenSSH ≥ 9.8), MaxStartups, fail2ban, or a proxy with nothing behind it.
    case closedBeforeGreeting(host: String, port: Int)
    case noCommonAlgorithms(host: String, port: Int, detail: String)
    case sshFailure(host: String, port: Int, detail: String)

    /// Each case's exit code (all 69: the VPS is unavailable), one sentence with the next step,
    /// and its layer where it is not the handshake.
    public var details: FailureDetails {
        switch self {
        case .cannotResolve(let host, let reason):
            FailureDetails(
                .unavailable, "cannot resolve \(host) (\(reason)): check the host name and this machine's DNS.",
                layer: "resolve")
        case .connectionRefused(let host, let port):
            FailureDetails(
                .unavailable,
                "\(Self.endpoint(host, port)) refused the connection: is sshd running there, on that port?",
                layer: "tcp")
        case .connectTimeout(let host, let port, let seconds):
            FailureDetails(
                .unavailable,
                "no answer from \(Self.endpoint(host, port)) after \(seconds) s: check the address, the VPS and its firewall.",
                layer: "tcp")
        case .unreachable(let host, let port, let reason, _):
            FailureDetails(.unavailable, "cannot reach \(Self.endpoint(host, port)): \(reason).", layer: "tcp")
        case .notSSH(let host, let port, let detail):
            FailureDetails(
                .unavailable, "\(Self.endpoint(host, port)) is not an SSH server (\(detail)): check the port.")
        case .closedBeforeGreeting(let host, let port):
            FailureDetails(.unavailable, Self.closedBeforeGreeting(Self.endpoint(host, port)))
        case .noCommonAlgorithms(let host, let port, let detail):
            FailureDetails(
                .unavailable, "\(Self.endpoint(host, port)) and octunnel have no algorithm in common. \(detail)")
        case .sshFailure(let host, let port, let detail):
            FailureDetails(.unavailable, "SSH session with \(Self.endpoint(host, port)) failed: \(detail).")
        }
    }

    /// Why an sshd closes before its greeting (OpenSSH 9.8's PerSourcePenalties, mostly), and what to do.
    private static func closedBeforeGreeting(_ endpoint: String) -> String {
        """
        \(endpoint) closed the connection before its SSH greeting. An OpenSSH 9.8 or newer sshd does that \
        while it penalizes this address (PerSourcePenalties: 1 s for each connection that never tried \
        to authenticate, 5 s for each failed authentication, refusing the whole address from 15 s of penalty on, \
        for up to 10 minutes by default, every machine behind the same NAT too): wait and try again \
        (tunnel up retries by itself), or exempt the address with PerSourcePenaltyExemptList. \
        On the VPS, `sshd -T | grep persourcepenal` shows the settings and its log says `drop connection ... penalty`. \
        MaxStartups, fail2ban or a proxy with nothing behind it close connections the same way.
        """
    }
}
