import OCTunnelLibc

/// The one door to the system calls that differ between Linux and macOS, as swift-system's
/// `Syscalls.swift` and SwiftNIO's `System.swift` are: each wrapper is named after the C call it
/// makes, returns what it returned and leaves `errno` set, unless it says it retries EINTR.
/// Each platform's C library comes from OCTunnelLibc (one file per platform, with what differs);
/// the layers above name neither platform nor its constants (SyscallSeamTests checks it).
enum Syscall {
    /// `poll(2)` over `fds`: the count of ready descriptors; EINTR is thrown, not retried (the
    /// loop treats it as a wake-up).
    static func poll(_ fds: inout [pollfd], timeout milliseconds: Int32) throws(Errno) -> Int32 {
        let ready = system_poll(&fds, nfds_t(fds.count), milliseconds)
        if ready < 0 { throw .current }
        return ready
    }

    /// `poll(2)` on one descriptor, retrying EINTR; the count of ready descriptors or -1.
    static func pollRetryingEINTR(_ fd: inout pollfd, timeout milliseconds: Int32) -> Int32 {
        retryingEINTR { system_poll(&fd, 1, milliseconds) }
    }

    /// Calls `body` again while it fails (-1) with EINTR; what it returned last, `errno` set.
    static func retryingEINTR<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result != -1 || errno != EINTR { return result }
        }
    }

    /// Waits up to `milliseconds` for `fd` to be readable (or at its end), EINTR retried: whether
    /// it is; poll's failure is thrown.
    static func waitReadable(_ fd: Int32, milliseconds: Int32) throws(Errno) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = pollRetryingEINTR(&pfd, timeout: milliseconds)
        if ready < 0 { throw .current }
        return ready > 0
    }

    /// Waits up to `milliseconds` for `fd` to take bytes; whether it does (a failure is a no).
    @discardableResult
    static func waitWritable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return pollRetryingEINTR(&pfd, timeout: milliseconds) > 0
    }

    /// Whether `fd` polls writable right now (`poll` for POLLOUT with no wait).
    static func isWritable(_ fd: Int32) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return system_poll(&pfd, 1, 0) == 1 && pfd.revents & Int16(POLLOUT) != 0
    }
}

private func system_poll(_ fds: UnsafeMutablePointer<pollfd>, _ count: nfds_t, _ timeout: Int32) -> Int32 {
    Platform.poll(fds, count, timeout)
}
