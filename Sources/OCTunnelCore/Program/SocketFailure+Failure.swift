/// What the system layer's own errors are to the user: the same one-line errors, exit codes
/// and words as when System/ threw them itself (issue 49: System/ knows nothing above it).
extension SocketFailure {
    /// A resolve or connect that failed as `ConnectError`, a listen as `ForwardError`.
    public var failure: any OCTunnelFailure {
        switch self {
        case .cannotResolve(let host, let reason): ConnectError.cannotResolve(host: host, reason: reason)
        case .refused(let host, let port): ConnectError.connectionRefused(host: host, port: port)
        case .timedOut(let host, let port, let seconds):
            ConnectError.connectTimeout(host: host, port: port, seconds: seconds)
        case .unreachable(let host, let port, let reason, _):
            ConnectError.unreachable(host: host, port: port, reason: reason, noRoute: isNoRoute)
        case .portInUse(let bind, let port): ForwardError.localPortInUse(bind: bind, port: port)
        case .cannotListen(let bind, let port, let reason):
            ForwardError.cannotListen(bind: bind, port: port, reason: reason)
        }
    }

    /// `body`, its socket failure thrown as octunnel's error.
    static func thrownAsFailure<T>(_ body: () throws(SocketFailure) -> T) throws -> T {
        do { return try body() } catch { throw error.failure }
    }
}

extension FileLock {
    /// The lock guarding a change to one of octunnel's files; failing to take it is
    /// `cannotWrite` on the lock file.
    static func forChange(_ path: String) throws -> FileLock {
        do {
            return try FileLock(path: path)
        } catch {
            throw LocalFileError.cannotWrite(path: path, reason: error.description)
        }
    }
}
