import Foundation

/// Unix-domain stream sockets by path: the address, a connect that does not wait on a full
/// backlog, and the peer's user id.
enum UnixSocket {
    /// `sockaddr_un` for `path`; nil when the path does not fit (107 bytes on Linux).
    static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A new Unix stream socket, close-on-exec.
    static func make() throws(SystemError) -> OwnedDescriptor {
        let fd = Syscall.socket(AF_UNIX, .stream, .closeOnExec)
        guard fd >= 0 else { throw .last("socket") }
        return OwnedDescriptor(fd)
    }

    /// A socket listening at `path` (at `address`), its mode set to `mode` between bind and
    /// listen, so nothing can connect before it is set; with the socket file's device and inode,
    /// to know it later from a successor's; non-blocking. Nothing is left behind on failure.
    static func listen(
        at address: sockaddr_un, path: String, mode: mode_t, backlog: Int32
    ) throws(SystemError) -> (socket: OwnedDescriptor, device: UInt, inode: UInt) {
        let socket = try make()
        guard withAddress(address, { Syscall.bind(socket.number, $0, $1) }) == 0 else {
            throw .last("bind", detail: path)
        }
        var info = stat()
        var failure: SystemError?
        if chmod(path, mode) != 0 {
            failure = .last("chmod", detail: path)
        } else if lstat(path, &info) != 0 {
            failure = .last("lstat", detail: path)
        } else if Syscall.listen(socket.number, backlog: backlog) != 0 {
            failure = .last("listen", detail: path)
        }
        if let failure {
            socket.close()
            unlink(path)
            throw failure
        }
        socket.setNonBlocking(true)
        return (socket, UInt(info.st_dev), UInt(info.st_ino))
    }

    /// Removes the socket file at `path` if it is still the one with `device` and `inode`.
    static func remove(_ path: String, device: UInt, inode: UInt) {
        var info = stat()
        if lstat(path, &info) == 0, UInt(info.st_dev) == device, UInt(info.st_ino) == inode {
            unlink(path)
        }
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    static func withAddress<T>(_ address: sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var copy = address
        return withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Connects to `path` without blocking on a listener whose backlog is full (that is
    /// EAGAIN, reported like any other errno); returns a blocking descriptor.
    static func connect(_ path: String) -> Result<OwnedDescriptor, SystemError> {
        guard let address = address(path) else { return .failure(SystemError("connect", .nameTooLong, detail: path)) }
        let socket: OwnedDescriptor
        do { socket = try make() } catch { return .failure(error) }
        socket.setNonBlocking(true)
        var failure: Errno?
        repeat {
            failure = withAddress(address) { Syscall.connect(socket.number, $0, $1) } == 0 ? nil : .current
        } while failure == .interrupted
        if let failure { return .failure(SystemError("connect", failure, detail: path)) }
        socket.setNonBlocking(false)
        return .success(socket)
    }
}
