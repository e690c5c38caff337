import Foundation

/// A TCP server on 127.0.0.1 (free port) that runs `handler` on each connection in its own
/// thread; the stand-in for "something behind the VPS" when bytes must be checked.
public final class TCPTestServer: @unchecked Sendable {
    public let port: Int
    private let listener: Int32
    /// The listening socket's number (for the harness's own test of closing it once).
    public var listenerNumber: Int32 { listener }
    private let lock = NSLock()
    private var stopped = false
    private var clients: Set<Int32> = []
    /// Signalled when the accept thread has returned: only then is the listener closed, so
    /// that thread can never call accept() on a number the process has reused since.
    private let acceptDone = DispatchSemaphore(value: 0)

    public init(handler: @escaping @Sendable (Int32) -> Void) throws {
        let listener = closeOnExecStreamSocket()
        self.listener = listener
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 1024) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in
            defer { acceptDone.signal() }
            while true {
                let fd = closeOnExecAccept(listener)
                if fd < 0 { return }
                lock.lock()
                if stopped { lock.unlock(); close(fd); return }
                clients.insert(fd)
                lock.unlock()
                let worker = Thread { [self] in
                    handler(fd)
                    lock.lock()
                    clients.remove(fd)
                    lock.unlock()
                    close(fd)
                }
                worker.stackSize = 256 * 1024
                worker.start()
            }
        }
        thread.start()
    }

    /// Echoes every byte back; carries the client's EOF back as its own.
    public static func echo() throws -> TCPTestServer {
        try TCPTestServer { fd in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count <= 0 { break }
                guard writeAll(fd, Array(buffer[..<count])) else { return }
            }
            shutdown(fd, Int32(SHUT_WR))
        }
    }

    /// Drops every connection as OpenSSH's PerSourcePenalties or MaxStartups do: "Not allowed
    /// at this time", then closed, before any greeting.
    public static func penaltyDropper() throws -> TCPTestServer {
        try TCPTestServer { fd in
            _ = writeAll(fd, Array("Not allowed at this time\r\n".utf8))
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    /// Stops accepting and ends every connection; safe to call more than once (the deinit calls
    /// it too). The listener is closed once, after the accept thread is gone: closing a number
    /// twice closes whatever the process opened under it in between, another test's socket.
    public func stop() {
        lock.lock()
        if stopped { lock.unlock(); return }
        stopped = true
        for fd in clients { shutdown(fd, Int32(SHUT_RDWR)) }
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        acceptDone.wait()
        close(listener)
    }

    deinit { stop() }
}

/// Writes all bytes to a blocking socket; false on error.
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let count = bytes.withUnsafeBytes {
            send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { return false }
        offset += count
    }
    return true
}

/// Reads until EOF (or `limit` bytes) from a blocking socket.
public func readAll(_ fd: Int32, limit: Int = .max) -> [UInt8] {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while result.count < limit {
        let count = read(fd, &buffer, min(buffer.count, limit - result.count))
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        result += buffer[..<count]
    }
    return result
}

/// Deterministic pseudo-random bytes, so a transfer can be checked byte for byte.
public func patternBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 6364136223846793005 &+ 1442695040888963407
    var bytes = [UInt8](repeating: 0, count: count)
    for index in 0..<count {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return bytes
}

/// Sets SO_RCVTIMEO/SO_SNDTIMEO so a broken test fails instead of hanging.
public func setSocketTimeout(_ fd: Int32, seconds: Int) {
    var tv = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
}
