import OCTunnelLibc

/// The socket calls whose constants or shape differ between Linux and macOS: creation with
/// flags, send without SIGPIPE, quick-ACK, the send queue, the peer's credentials.
extension Syscall {
    /// The socket types octunnel makes (Glibc imports `SOCK_STREAM` as an enum, Darwin as an Int32).
    enum SocketType {
        case stream
        case raw
        case datagram

        /// The value `socket(2)` and `addrinfo.ai_socktype` take.
        var value: Int32 {
            switch self {
            case .stream: return Platform.streamSocket
            case .raw: return Platform.rawSocket
            case .datagram: return Platform.datagramSocket
            }
        }
    }

    /// How a new socket starts out.
    struct SocketFlags: OptionSet, Sendable {
        let rawValue: Int32
        /// `O_NONBLOCK` from the start.
        static let nonBlocking = SocketFlags(rawValue: 1)
        /// Close-on-exec from the start: a child spawned meanwhile never inherits it.
        static let closeOnExec = SocketFlags(rawValue: 2)
    }

    /// `socket(2)`. Linux sets the flags in the call itself (`SOCK_NONBLOCK`, `SOCK_CLOEXEC`);
    /// macOS has neither, so it sets them with `fcntl` right after, and turns SIGPIPE off for
    /// the socket (`SO_NOSIGPIPE`, its stand-in for `MSG_NOSIGNAL`). The descriptor or -1.
    static func socket(_ family: Int32, _ type: SocketType, _ flags: SocketFlags, protocol number: Int32 = 0) -> Int32 {
        Platform.socket(
            family, type.value, number, nonBlocking: flags.contains(.nonBlocking),
            closeOnExec: flags.contains(.closeOnExec))
    }

    /// A connection waiting on `listener`, close-on-exec and non-blocking from the call that
    /// makes it (`accept4` on Linux: no window in which a child spawned meanwhile inherits it;
    /// macOS sets the flags right after, and `SO_NOSIGPIPE`). EINTR and ECONNABORTED (a client
    /// gone before it was taken) are retried; nil when none waits (EAGAIN) or on another failure.
    static func accept(_ listener: Int32) -> Int32? {
        while true {
            let fd = Platform.accept(listener)
            if fd >= 0 { return fd }
            let error = Errno.current
            if error == .interrupted || error == .connectionAborted { continue }
            return nil
        }
    }

    /// `connect(2)`; not retried (after EINTR the connect goes on, as after EINPROGRESS).
    static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        Platform.connect(fd, address, length)
    }

    /// `bind(2)`.
    static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        Platform.bind(fd, address, length)
    }

    /// `listen(2)`.
    static func listen(_ fd: Int32, backlog: Int32) -> Int32 {
        Platform.listen(fd, backlog)
    }

    /// `send(2)` that never raises SIGPIPE: `MSG_NOSIGNAL` on Linux; on macOS the socket
    /// carries `SO_NOSIGPIPE` from `socket` / `accept` above. Not retried; the count or -1.
    static func sendNoSignal(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, flags: Int32 = 0) -> Int {
        Platform.send(fd, buffer, length, flags | Platform.noSignal)
    }

    /// What a send or a receive on a non-blocking socket did, `errno` read right after the call.
    enum Transfer: Equatable {
        /// This many bytes (more than 0).
        case moved(Int)
        /// The peer's end (a receive of 0).
        case end
        /// Nothing now: EAGAIN or EWOULDBLOCK (try again when poll says so; EINTR is retried).
        case again
        case failed(Errno)

        init(_ count: Int) {
            if count > 0 { self = .moved(count); return }
            if count == 0 { self = .end; return }
            let error = Errno.current
            self = error.isTransient ? .again : .failed(error)
        }

        /// The bytes moved (0 for anything else).
        var count: Int { if case .moved(let count) = self { return count } else { return 0 } }
    }

    /// `recv(2)` as a `Transfer`, EINTR retried.
    static func receive(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ length: Int, flags: Int32 = 0) -> Transfer {
        Transfer(retryingEINTR { recv(fd, buffer, length, flags: flags) })
    }

    /// `sendNoSignal` as a `Transfer`, EINTR retried (a send of nothing is `.end`).
    static func transmit(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, flags: Int32 = 0) -> Transfer {
        Transfer(retryingEINTR { sendNoSignal(fd, buffer, length, flags: flags) })
    }

    /// `SO_RCVTIMEO`: a blocking receive gives up after `seconds`.
    static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The bytes of a numeric IPv4 or IPv6 address (`inet_pton`), network order; nil for anything else.
    static func addressBytes(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// `shutdown(2)` of the sending direction (`SHUT_WR`): the peer reads its end.
    @discardableResult
    static func shutdownSending(_ fd: Int32) -> Int32 {
        Platform.shutdown(fd, Platform.sendingEnd)
    }

    /// `recv(2)`; not retried; the count, 0 at EOF, or -1.
    static func recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ length: Int, flags: Int32 = 0) -> Int {
        Platform.recv(fd, buffer, length, flags)
    }

    /// `getsockopt(SO_ERROR)`: how a non-blocking connect ended (0: connected).
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length)
        return value
    }

    /// `setsockopt(TCP_QUICKACK)`: sends the pending ACK now (Linux; not permanent, so it is set
    /// again after every round that read). macOS has no such option: a no-op there.
    static func acknowledgeNow(_ fd: Int32) { Platform.acknowledgeNow(fd) }

    /// Bytes in the kernel's send queue the peer has not acknowledged: `ioctl(SIOCOUTQ)` on
    /// Linux, `getsockopt(SO_NWRITE)` on macOS; nil when it cannot be read.
    static func unsentBytes(_ fd: Int32) -> Int? { Platform.unsentBytes(fd) }

    /// The process id and user id at the other end of a Unix socket: `SO_PEERCRED` on Linux;
    /// `LOCAL_PEERPID` and `getpeereid` on macOS. nil if they cannot be read.
    static func peerCredentials(_ fd: Int32) -> (pid: pid_t, uid: uid_t)? { Platform.peerCredentials(fd) }
}
