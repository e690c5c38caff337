import OCTunnelLibc

/// open, read, write and close: EINTR retried where retrying is right, and named so a caller
/// with a method of the same name (`OpenedFile.open`, `SSHSession.close`) reaches the system's.
extension Syscall {
    /// `open(2)`, retrying EINTR (a FIFO's open can be interrupted); the descriptor or -1.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) -> Int32 {
        retryingEINTR { Platform.open(path, flags, mode) }
    }

    /// `read(2)`, retrying EINTR; the byte count, 0 at the end, or -1.
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        retryingEINTR { Platform.read(fd, buffer, count) }
    }

    /// `write(2)`, retrying EINTR; the byte count (possibly short) or -1.
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        retryingEINTR { Platform.write(fd, buffer, count) }
    }

    /// `close(2)`, never retried: Linux releases the number even when close reports EINTR, and
    /// a second close could close whoever was given the number next.
    @discardableResult
    static func close(_ fd: Int32) -> Int32 {
        Platform.close(fd)
    }

    /// `shutdown(2)` of both directions (`SHUT_RDWR`).
    @discardableResult
    static func shutdownBoth(_ fd: Int32) -> Int32 {
        Platform.shutdown(fd, Platform.bothEnds)
    }

    /// A pipe whose ends are close-on-exec from the call that makes them (`pipe2` on Linux; macOS
    /// has no `pipe2` and sets the flags right after), non-blocking when asked.
    static func pipe(nonBlocking: Bool = false) throws(SystemError) -> (read: OwnedDescriptor, write: OwnedDescriptor) {
        var ends: [Int32] = [-1, -1]
        let made = Platform.pipe(&ends, nonBlocking: nonBlocking)
        guard made.result == 0 else { throw .last(made.call) }
        return (OwnedDescriptor(ends[0]), OwnedDescriptor(ends[1]))
    }

    /// `fcntl(F_SETFL)`: turns `O_NONBLOCK` on or off, keeping the other status flags.
    static func setNonBlocking(_ fd: Int32, _ on: Bool) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
    }

    /// `fcntl(F_SETFD, FD_CLOEXEC)`: a child spawned later does not inherit `fd`.
    static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
}
