import OCTunnelLibc

/// What the layers above System/ do with a descriptor they own: each method is the `Syscall`
/// of the same name on this descriptor's number, so no number leaves this folder (swift-system's
/// `FileDescriptor` methods are the model). The libssh2 boundary reads `number` itself.
extension OwnedDescriptor {
    /// `open(2)` of `path` with `flags` (close-on-exec added), EINTR retried; nil when it fails.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) -> OwnedDescriptor? {
        let fd = Syscall.open(path, flags | O_CLOEXEC, mode: mode)
        return fd >= 0 ? OwnedDescriptor(fd) : nil
    }

    /// `open(2)` of `path` for appending, created with `mode` if missing (close-on-exec).
    static func openForAppending(_ path: String, mode: mode_t) -> OwnedDescriptor? {
        open(path, O_WRONLY | O_CREAT | O_APPEND, mode: mode)
    }

    /// `read(2)`, retrying EINTR; the byte count, 0 at the end, or -1.
    func read(_ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { Syscall.read(number, buffer, count) }

    /// `write(2)`, retrying EINTR; the byte count (possibly short) or -1.
    @discardableResult
    func write(_ buffer: UnsafeRawPointer, _ count: Int) -> Int { Syscall.write(number, buffer, count) }

    /// `recv(2)` as a `Transfer`, EINTR retried.
    func receive(_ buffer: UnsafeMutableRawPointer?, _ length: Int, flags: Int32 = 0) -> Syscall.Transfer {
        Syscall.receive(number, buffer, length, flags: flags)
    }

    /// `recv(2)` with `options` (`MSG_PEEK`, `MSG_DONTWAIT`), as a `Transfer`, EINTR retried.
    func receive(_ buffer: UnsafeMutableRawPointer?, _ length: Int, options: MessageOptions) -> Syscall.Transfer {
        Syscall.receive(number, buffer, length, flags: options.rawValue)
    }

    /// A send with `options` (`MSG_DONTWAIT`) that never raises SIGPIPE, as a `Transfer`, EINTR retried.
    func transmit(_ buffer: UnsafeRawPointer?, _ length: Int, options: MessageOptions) -> Syscall.Transfer {
        Syscall.transmit(number, buffer, length, flags: options.rawValue)
    }

    /// A send that never raises SIGPIPE, as a `Transfer`, EINTR retried.
    func transmit(_ buffer: UnsafeRawPointer?, _ length: Int, flags: Int32 = 0) -> Syscall.Transfer {
        Syscall.transmit(number, buffer, length, flags: flags)
    }

    /// The peer reads its end (`shutdown(SHUT_WR)`).
    func shutdownSending() { Syscall.shutdownSending(number) }

    /// Both directions shut (`shutdown(SHUT_RDWR)`): a blocked peer or call on it ends at once.
    func shutdownBoth() { Syscall.shutdownBoth(number) }

    /// How a non-blocking connect ended (`SO_ERROR`): nil when it connected.
    var pendingError: Errno? {
        let code = Syscall.pendingError(number)
        return code == 0 ? nil : Errno(rawValue: code)
    }

    /// `TCP_NODELAY`: small writes go out at once.
    func setNoDelay() { Sockets.setNoDelay(number) }

    /// Turns `O_NONBLOCK` on or off.
    func setNonBlocking(_ on: Bool) { Syscall.setNonBlocking(number, on) }

    /// `SO_RCVTIMEO`: a blocking receive gives up after `seconds`.
    func setReceiveTimeout(seconds: Int) { Syscall.setReceiveTimeout(number, seconds: seconds) }

    /// Bytes in the kernel's send queue the peer has not acknowledged, or nil.
    var unsentBytes: Int? { Syscall.unsentBytes(number) }

    /// Sends the pending ACK now (`TCP_QUICKACK`; a no-op where there is none).
    func acknowledgeNow() { Syscall.acknowledgeNow(number) }

    /// Whether the descriptor polls writable right now.
    var isWritable: Bool { Syscall.isWritable(number) }

    /// Waits up to `milliseconds` to take bytes; whether it does.
    @discardableResult
    func waitWritable(milliseconds: Int32) -> Bool { Syscall.waitWritable(number, milliseconds: milliseconds) }

    /// Waits up to `milliseconds` to be readable (or at its end); poll's failure is thrown.
    func waitReadable(milliseconds: Int32) throws(Errno) -> Bool {
        try Syscall.waitReadable(number, milliseconds: milliseconds)
    }

    /// A connection waiting on this listener, owned, close-on-exec and non-blocking; nil when
    /// none waits.
    func accept() -> OwnedDescriptor? { Syscall.accept(number).map(OwnedDescriptor.init) }

    /// The peer's address and port as text, for logs.
    var peer: (host: String, port: Int) { Sockets.peerDescription(of: number) }

    /// The local port the socket is bound to.
    var localPort: Int? { Sockets.localPort(of: number) }

    /// The process id at the other end of a Unix socket; nil if it cannot be read.
    var peerPID: Int32? {
        guard let pid = Syscall.peerCredentials(number)?.pid, pid > 0 else { return nil }
        return pid
    }

    /// The user id of the process at the other end of a Unix socket; nil if it cannot be read.
    var peerUID: UInt32? { Syscall.peerCredentials(number).map { UInt32($0.uid) } }
}

/// What a `recv(2)` or `send(2)` is asked to do beyond moving bytes (no `MSG_…` constant above System/).
struct MessageOptions: OptionSet {
    let rawValue: Int32

    /// `MSG_PEEK`: look at the bytes, leave them queued.
    static let peek = MessageOptions(rawValue: Int32(MSG_PEEK))
    /// `MSG_DONTWAIT`: never block, whatever the socket's mode.
    static let dontWait = MessageOptions(rawValue: Int32(MSG_DONTWAIT))
}
