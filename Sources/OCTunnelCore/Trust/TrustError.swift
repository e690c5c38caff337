import Foundation

/// The VPS presented a host key octunnel will not trust: nothing was sent to it.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum TrustError: OCTunnelFailure, Equatable {
    /// Every failure here is the host key's.
    public static let roomLayer = "host key"

    case hostKeyChanged(host: String, port: Int, known: [String], presented: String, file: String)
    case hostKeyRevoked(host: String, port: Int, presented: String, file: String)
    case hostKeyNotExpected(host: String, port: Int, expected: String, presented: String)
    case unknownHostRefused(host: String, port: Int, presented: String)
    case unknownHostRefusedByStrictChecking(host: String, port: Int, presented: String)
    case hostKeyTypeUnknownToOpenSSH(host: String, port: Int, presentedType: String, presented: String, known: [String])
    case hostKeyDiffersFromOpenSSH(
        host: String, port: Int, presented: String, known: String, file: String, line: Int, name: String)

    /// Each case's exit code (76: the host key is not trusted) and one sentence with the next step.
    public var details: FailureDetails {
        FailureDetails(.hostKeyChanged, words)
    }

    /// What was presented, what octunnel trusts instead, and how to go on if the change is known.
    private var words: String {
        switch self {
        case .hostKeyChanged(let host, let port, let known, let presented, let file):
            """
            HOST KEY CHANGED for \(Self.endpoint(host, port)): it now presents \(presented), \
            but \(file) trusts \(known.joined(separator: ", ")). This can be an attack; nothing was sent to it. \
            If you know the key changed (sshd reinstalled), run `octunnel trust reset \(Self.endpoint(host, port))` \
            and connect again.
            """
        case .hostKeyRevoked(let host, let port, let presented, let file):
            "\(Self.endpoint(host, port)) presents a key marked @revoked in \(file) (\(presented)); refusing to connect."
        case .hostKeyNotExpected(let host, let port, let expected, let presented):
            """
            \(Self.endpoint(host, port)) presents host key \(presented), not the expected \(expected); \
            nothing was sent to it. Check the fingerprint on the VPS with \
            `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`.
            """
        case .unknownHostRefused(let host, let port, let presented):
            """
            \(Self.endpoint(host, port)) is not trusted yet (it presents \(presented)) and --no-trust-new was given: \
            compare it with `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` on the VPS, \
            then connect without --no-trust-new or with --expect-fingerprint.
            """
        case .unknownHostRefusedByStrictChecking(let host, let port, let presented):
            """
            \(Self.endpoint(host, port)) is not trusted yet (it presents \(presented)) and your ssh config \
            says StrictHostKeyChecking yes for it: compare it with `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` \
            on the VPS, then connect with --expect-fingerprint \(presented).
            """
        case .hostKeyTypeUnknownToOpenSSH(let host, let port, let presentedType, let presented, let known):
            """
            OpenSSH knows \(Self.endpoint(host, port)) only by keys of other types (\(known.joined(separator: "; "))), \
            and it now presents \(presentedType) \(presented). ssh would ask before trusting it; \
            nothing was sent to it. If the VPS really has this key \
            (`ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub` there), accept it on purpose \
            with --expect-fingerprint \(presented), or let the server offer a known type again.
            """
        case .hostKeyDiffersFromOpenSSH(let host, let port, let presented, let known, let file, let line, let name):
            """
            HOST KEY DIFFERS from OpenSSH's \(file) line \(line) for \(Self.endpoint(host, port)): \
            it presents \(presented), but that line holds \(known). This can be an attack; nothing was sent to it. \
            If you know the key changed, remove the old one \
            (`ssh-keygen -R '\(name)'\(file == "~/.ssh/known_hosts" ? "" : " -f \(file)")`; \
            octunnel never writes OpenSSH's files) and connect again, or skip that file with --no-openssh-known-hosts.
            """
        }
    }
}
