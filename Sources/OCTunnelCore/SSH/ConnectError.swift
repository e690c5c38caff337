import Foundation

/// Reaching the VPS: the name, the TCP connection and the SSH handshake.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum ConnectError: OCTunnelFailure, Equatable {
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

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        .unavailable
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        switch self {
        case .cannotResolve: "resolve"
        case .connectionRefused, .connectTimeout, .unreachable: "tcp"
        case .notSSH, .closedBeforeGreeting, .noCommonAlgorithms, .sshFailure: "ssh"
        }
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .cannotResolve(let host, let reason):
            return "cannot resolve \(host) (\(reason)): check the host name and this machine's DNS."
        case .connectionRefused(let host, let port):
            return "\(Self.endpoint(host, port)) refused the connection: is sshd running there, on that port?"
        case .connectTimeout(let host, let port, let seconds):
            return
                "no answer from \(Self.endpoint(host, port)) after \(seconds) s: check the address, the VPS and its firewall."
        case .unreachable(let host, let port, let reason, _):
            return "cannot reach \(Self.endpoint(host, port)): \(reason)."
        case .notSSH(let host, let port, let detail):
            return "\(Self.endpoint(host, port)) is not an SSH server (\(detail)): check the port."
        case .closedBeforeGreeting(let host, let port):
            return [
                "\(Self.endpoint(host, port)) closed the connection ",
                "before its SSH greeting. An OpenSSH 9.8 or newer sshd does that while it ",
                "penalizes this address (PerSourcePenalties: 1 ",
                "s for each connection that never tried to authenticate, 5 s for each failed ",
                "authentication, refusing the whole address from ",
                "15 s of penalty on, for up to 10 minutes by default, every machine behind ",
                "the same NAT too): wait and try again (tunnel up ",
                "retries by itself), or exempt the address with PerSourcePenaltyExemptList. ",
                "On the VPS, `sshd -T | grep persourcepenal` shows the settings and its log says `drop connection ... penalty`. ",
                "MaxStartups, fail2ban or a proxy with nothing behind it close connections the same way.",
            ].joined()
        case .noCommonAlgorithms(let host, let port, let detail):
            return "\(Self.endpoint(host, port)) and octunnel have no algorithm in common. \(detail)"
        case .sshFailure(let host, let port, let detail):
            return "SSH session with \(Self.endpoint(host, port)) failed: \(detail)."
        }
    }
}
