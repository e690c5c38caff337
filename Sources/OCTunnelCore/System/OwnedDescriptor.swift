/// A socket descriptor with exactly one owner, closed exactly once (swift-system's
/// `FileDescriptor` is the model). After `close()` its number is gone: `number` reads -1,
/// which no system call can mistake for a live descriptor, and in a debug build any read of
/// it stops the process there. A descriptor number is reused by the next `accept` or
/// `socket` at once, so an owner that closed and then read, wrote or closed the old number
/// again would reach somebody else's connection (issue 29).
final class OwnedDescriptor {
    private var value: Int32

    /// Takes ownership of `fd` (nothing else may close it).
    init(_ fd: Int32) { value = fd }

    /// The descriptor's number while open. A debug build traps on a read after `close()`;
    /// a release build gets -1 (EBADF on any use).
    var number: Int32 {
        assert(value >= 0, "a descriptor was used after its owner closed it")
        return value
    }

    /// Whether `close()` has not been called yet.
    var isOpen: Bool { value >= 0 }

    /// Closes the descriptor; later calls do nothing (they can never close a reused number).
    func close() {
        guard value >= 0 else { return }
        let fd = value
        value = -1
        Syscall.close(fd)
    }

    deinit { close() }
}
