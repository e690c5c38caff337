/// Why resolving, connecting or listening failed: System/'s own error (issue 49: the bottom layer
/// knows nothing above it); `SocketFailure.failure` (Program/) names it for the user, word for word
/// as before.
public enum SocketFailure: Error, Sendable, Equatable {
    /// `getaddrinfo` failed (`gai_strerror`'s reason).
    case cannotResolve(host: String, reason: String)
    /// Every address refused the connection.
    case refused(host: String, port: Int)
    /// No address answered within the time given.
    case timedOut(host: String, port: Int, seconds: Int)
    /// Another failure: the last address's errno, and what `strerror` says of it.
    case unreachable(host: String, port: Int, reason: String, errno: Errno)
    /// The port is taken on `bind`.
    case portInUse(bind: String, port: Int)
    /// A listen failed otherwise.
    case cannotListen(bind: String, port: Int, reason: String)

    /// Whether the connect found no route at all (`Errno.meansNoRoute`): this machine is offline.
    public var isNoRoute: Bool {
        if case .unreachable(_, _, _, let errno) = self { return errno.meansNoRoute }
        return false
    }
}
