/// What the system layer's own errors are to the user: the same one-line errors, exit codes
/// and words as when System/ threw them itself (issue 49: System/ knows nothing above it).
extension OCTunnelError {
    /// A resolve, connect or listen that failed.
    public init(_ failure: SocketFailure) {
        switch failure {
        case .cannotResolve(let host, let reason): self = .cannotResolve(host: host, reason: reason)
        case .refused(let host, let port): self = .connectionRefused(host: host, port: port)
        case .timedOut(let host, let port, let seconds): self = .connectTimeout(host: host, port: port, seconds: seconds)
        case .unreachable(let host, let port, let reason, _):
            self = .unreachable(host: host, port: port, reason: reason, noRoute: failure.isNoRoute)
        case .portInUse(let bind, let port): self = .localPortInUse(bind: bind, port: port)
        case .cannotListen(let bind, let port, let reason): self = .cannotListen(bind: bind, port: port, reason: reason)
        }
    }
}

extension OCTunnelError {
    /// `body`, its socket failure as octunnel's error.
    static func fromSocket<T>(_ body: () throws(SocketFailure) -> T) throws(OCTunnelError) -> T {
        do { return try body() } catch { throw OCTunnelError(error) }
    }
}

extension FileLock {
    /// The lock guarding a change to one of octunnel's files; failing to take it is
    /// `cannotWrite` on the lock file.
    static func forChange(_ path: String) throws(OCTunnelError) -> FileLock {
        do {
            return try FileLock(path: path)
        } catch {
            throw .cannotWrite(path: path, reason: error.description)
        }
    }
}
