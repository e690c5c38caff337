import OCTunnelLibc

/// A system call's error number as a value (swift-system's `Errno` is the model): System/ reads
/// `errno` once, right after the call that failed, and hands this up; nothing above the layer
/// reads `errno` or calls `strerror` (SyscallSeamTests checks it).
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `errno` now: for System/ only, right after the call that set it.
    static var current: Errno { Errno(rawValue: errno) }

    /// What `strerror` says of it ("No such file or directory").
    public var description: String { String(cString: strerror(rawValue)) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    /// `ELOOP`: what `open(2)` with `O_NOFOLLOW` says of a symbolic link.
    public static let symbolicLink = Errno(rawValue: ELOOP)

    /// EAGAIN, EWOULDBLOCK (the same number on Linux and macOS) or EINTR: try again later.
    public var isTransient: Bool { rawValue == EAGAIN || rawValue == EWOULDBLOCK || rawValue == EINTR }

    /// A connect's ENETUNREACH or EADDRNOTAVAIL: this machine has no route or no address for
    /// the destination at all (offline), unlike EHOSTUNREACH (a router found no host there),
    /// ECONNREFUSED or a timeout (the far end is down).
    public var meansNoRoute: Bool { rawValue == ENETUNREACH || rawValue == EADDRNOTAVAIL }
}
