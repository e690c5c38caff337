import Foundation

/// TCP helpers: resolving, connecting with a deadline (blocking, or started here and finished
/// by the loop), listening, and the addresses a socket has. Built on `Syscall`.
public enum Sockets {
    /// Every address of `host` (IPv6 and IPv4) for TCP `port` (`getaddrinfo`).
    static func resolve(host: String, port: Int) throws(SocketFailure) -> [(family: Int32, address: Data)] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Syscall.SocketType.stream.value
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw .cannotResolve(host: host, reason: String(cString: gai_strerror(rc)))
        }
        defer { freeaddrinfo(list) }
        var result: [(Int32, Data)] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            let info = current.pointee
            if let address = info.ai_addr {
                result.append((info.ai_family, Data(bytes: address, count: Int(info.ai_addrlen))))
            }
            node = info.ai_next
        }
        return result
    }

    /// Connects to the first address of `host` that answers, within `timeout` seconds overall,
    /// with TCP_NODELAY set. Errors name the layer: resolve, refused, no answer.
    static func connect(host: String, port: Int, timeout: Double) throws(SocketFailure) -> OwnedDescriptor {
        try connect(host: host, port: port, addresses: resolve(host: host, port: port), timeout: timeout)
    }

    /// Connects to the first of already-resolved `addresses` that answers within `timeout`.
    static func connect(
        host: String, port: Int, addresses: [(family: Int32, address: Data)], timeout: Double
    ) throws(SocketFailure) -> OwnedDescriptor {
        let deadline = Date().addingTimeInterval(timeout)
        var lastError: SocketFailure = .timedOut(host: host, port: port, seconds: Int(timeout.rounded()))
        func error(_ failure: Errno) -> SocketFailure {
            connectFailure(failure, host: host, port: port, timeout: timeout)
        }
        for (family, address) in addresses {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { break }
            let socket: OwnedDescriptor
            var failure: Errno?
            switch startConnect(family: family, address: address) {
            case .failed(let code):
                lastError = error(code)
                continue
            case .connected(let connected):
                socket = connected
            case .inProgress(let connecting):
                socket = connecting
                var pfd = pollfd(socket, events: .writable)
                let ready = pollRetrying(&pfd, milliseconds: Int32(min(remaining * 1000, Double(Int32.max))))
                failure = ready == 0 ? Errno(rawValue: ETIMEDOUT) : socket.pendingError
            }
            guard let failure else {
                socket.setNonBlocking(false)
                socket.setNoDelay()
                return socket
            }
            socket.close()
            lastError = error(failure)
        }
        throw lastError
    }

    /// A connect's errno as the failure it names: refused, no answer in `timeout`, or unreachable
    /// with the errno kept (ENETUNREACH, offline, is not EHOSTUNREACH, a host that is down).
    static func connectFailure(_ failure: Errno, host: String, port: Int, timeout: Double) -> SocketFailure {
        switch failure.rawValue {
        case ECONNREFUSED: return .refused(host: host, port: port)
        case ETIMEDOUT: return .timedOut(host: host, port: port, seconds: Int(timeout.rounded()))
        default: return .unreachable(host: host, port: port, reason: failure.description, errno: failure)
        }
    }

    /// How the first step of a non-blocking connect went.
    enum ConnectStart {
        /// Connected at once (loopback can): the socket, still non-blocking.
        case connected(OwnedDescriptor)
        /// Under way: poll the socket for POLLOUT, then read its `pendingError`.
        case inProgress(OwnedDescriptor)
        /// No socket, or the connect failed at once (the socket is closed).
        case failed(Errno)
    }

    /// A non-blocking, close-on-exec TCP socket for `family` and a `connect` to `address`
    /// started on it; EINTR counts as under way (the kernel goes on connecting). For both
    /// `connect(host:port:addresses:timeout:)` here and the home side's connects in the loop.
    static func startConnect(family: Int32, address: Data) -> ConnectStart {
        let fd = Syscall.socket(family, .stream, [.nonBlocking, .closeOnExec])
        if fd < 0 { return .failed(.current) }
        let socket = OwnedDescriptor(fd)
        let rc = address.withUnsafeBytes {
            Syscall.connect(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
        }
        if rc == 0 { return .connected(socket) }
        let code = Errno.current
        if code.rawValue == EINPROGRESS || code == .interrupted { return .inProgress(socket) }
        socket.close()
        return .failed(code)
    }

    /// `poll` on one descriptor, retrying EINTR; returns the count of ready descriptors.
    static func pollRetrying(_ pfd: inout pollfd, milliseconds: Int32) -> Int32 {
        Syscall.pollRetryingEINTR(&pfd, timeout: milliseconds)
    }

    /// `TCP_NODELAY`: small writes go out at once.
    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A listening, non-blocking TCP socket on `bind:port` (port 0 picks a free one).
    static func listen(bind: String, port: Int) throws(SocketFailure) -> (socket: OwnedDescriptor, port: Int) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Syscall.SocketType.stream.value
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(bind, String(port), &hints, &list)
        guard rc == 0, let info = list?.pointee, let address = info.ai_addr else {
            throw .cannotListen(
                bind: bind, port: port,
                reason: "\(bind) is not an IP address of this machine (\(String(cString: gai_strerror(rc))))")
        }
        defer { freeaddrinfo(list) }
        let fd = Syscall.socket(info.ai_family, .stream, .closeOnExec)
        guard fd >= 0 else { throw .cannotListen(bind: bind, port: port, reason: Errno.current.description) }
        let socket = OwnedDescriptor(fd)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        // An IPv6 listener takes IPv6 only, as OpenSSH's: "::" beside "0.0.0.0" on one port must not collide.
        if info.ai_family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        if Syscall.bind(fd, address, info.ai_addrlen) != 0 {
            let code = Errno.current
            if code == .addressInUse { throw .portInUse(bind: bind, port: port) }
            throw .cannotListen(bind: bind, port: port, reason: code.description)
        }
        guard Syscall.listen(fd, backlog: 1024) == 0 else {
            throw .cannotListen(bind: bind, port: port, reason: Errno.current.description)
        }
        socket.setNonBlocking(true)
        return (socket, socket.localPort ?? port)
    }

    /// The address a socket is bound to (`getsockname`); nil when the call fails.
    static func localAddress(of fd: Int32) -> sockaddr_storage? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return rc == 0 ? storage : nil
    }

    /// The local port a socket is bound to (`getsockname`).
    static func localPort(of fd: Int32) -> Int? {
        guard var storage = localAddress(of: fd) else { return nil }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer -> Int in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin_port))
            }
        }
    }

    /// The peer's address and port as text (`getpeername`), for logs.
    static func peerDescription(of fd: Int32) -> (host: String, port: Int) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0 else { return ("127.0.0.1", 0) }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let ok = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo(
                    $0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                    NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard ok == 0 else { return ("127.0.0.1", 0) }
        return (String(filledBuffer: host), Int(String(filledBuffer: service)) ?? 0)
    }

    /// Whether `bind` is a loopback address (127.0.0.0/8 or ::1), written as an address: a name
    /// (`127.example.com`) is not, whatever it looks like.
    public static func isLoopback(_ bind: String) -> Bool {
        guard let bytes = Syscall.addressBytes(bind) else { return false }
        if bytes.count == 4 { return bytes[0] == 127 }
        // ::1, or an IPv4 loopback written as IPv6 (::ffff:127.0.0.1).
        return bytes == [UInt8](repeating: 0, count: 15) + [1]
            || (bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] && bytes[12] == 127)
    }
}
