import Foundation
import OCTunnelLibc

// Files as octunnel reads and writes them, on the system calls directly (System/: errno is read
// here, right after each call, and leaves as a SystemError).

/// Atomic, durable file writes: a temp file in the same directory, created with its final mode,
/// written, fsynced, renamed into place, and the directory fsynced.
public enum AtomicFile {
    /// Replaces (or creates) `path` with `bytes`, readable per `mode` (permission bits, as
    /// `FileStatus.permissions`) from the first byte on.
    public static func write(_ bytes: [UInt8], to path: String, mode: UInt16) throws(SystemError) {
        let temp = try writeTemp(bytes, beside: path, mode: mode)
        do {
            try retryingEINTR("rename", detail: path) { rename(temp, path) }
        } catch {
            unlink(temp)
            throw error
        }
        try syncDirectory(of: path)
    }

    /// Creates `path` with `bytes`, failing with EEXIST (and changing nothing) if it exists.
    public static func create(_ bytes: [UInt8], at path: String, mode: UInt16) throws(SystemError) {
        let temp = try writeTemp(bytes, beside: path, mode: mode)
        defer { unlink(temp) }
        try retryingEINTR("link", detail: path) { link(temp, path) }
        try syncDirectory(of: path)
    }

    private static func writeTemp(_ bytes: [UInt8], beside path: String, mode: UInt16) throws(SystemError) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        var temp = ""
        var fd: Int32 = -1
        for _ in 0..<16 {
            // Swift's system generator (getrandom on Linux, arc4random on macOS): 48 bits, 12 hex digits.
            let suffix = String(String(UInt64.random(in: 0..<(1 << 48)) | (1 << 48), radix: 16).dropFirst())
            temp = (directory.isEmpty ? "" : directory + "/") + ".\(name).tmp-\(suffix)"
            fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
            if fd >= 0 || Errno.current != .fileExists { break }
        }
        guard fd >= 0 else { throw SystemError.last("open", detail: temp) }
        defer { close(fd) }
        do {
            // umask may have narrowed the mode; set the exact one before any byte is written.
            try retryingEINTR("fchmod", detail: temp) { fchmod(fd, mode_t(mode)) }
            var written = 0
            while written < bytes.count {
                let offset = written
                let count = try retryingEINTR("write", detail: temp) {
                    bytes.withUnsafeBytes { Syscall.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                }
                written += count
            }
            try retryingEINTR("fsync", detail: temp) { fsync(fd) }
        } catch {
            unlink(temp)
            throw error
        }
        return temp
    }

    /// fsyncs the directory holding `path`, so a rename survives a crash.
    public static func syncDirectory(of path: String) throws(SystemError) {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.last("open", detail: directory) }
        defer { close(fd) }
        try retryingEINTR("fsync", detail: directory) { fsync(fd) }
    }
}

/// Whole-file reads that tell a missing file apart from an unreadable one, and read only
/// regular files of bounded size (a FIFO, a device or /dev/zero is refused, not read as empty
/// or forever).
public enum FileBytes {
    /// The most any file octunnel reads may hold unless its reader says less.
    public static let defaultLimit = 16 << 20

    /// The file's bytes, or nil when it does not exist; anything but a regular file of at most
    /// `limit` bytes is refused.
    public static func read(_ path: String, limit: Int = defaultLimit) throws(SystemError) -> [UInt8]? {
        guard let file = try OpenedFile.open(path) else { return nil }
        try file.requireRegular()
        return try file.readAll(limit: limit)
    }

    /// What was opened (`fstat`, so a symlink counts as its target, checked on the very file
    /// read) and its bytes; nil when it does not exist. Only regular files are read (another
    /// kind gives no bytes); one larger than `limit` is refused.
    public static func readWithStatus(
        _ path: String, limit: Int = defaultLimit
    ) throws(SystemError) -> (info: FileStatus, bytes: [UInt8])? {
        guard let file = try OpenedFile.open(path) else { return nil }
        guard file.isRegular else { return (file.info, []) }
        return (file.info, try file.readAll(limit: limit))
    }

    /// `lstat` of a path, or nil when it does not exist.
    public static func status(_ path: String) throws(SystemError) -> FileStatus? {
        try Syscall.fileStatus(path, followingLinks: false)
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Where `path` finally leads when it is a symbolic link ("a missing file" for a dangling
    /// one); nil when it is not a link.
    public static func symlinkTarget(_ path: String) -> String? {
        guard let info = try? status(path), info.kind == .symbolicLink else { return nil }
        guard let resolved = realpath(path, nil) else { return "a missing file" }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// A file opened for reading, so what it is (`fstat`: type, mode, size) can be checked on the
/// very file before a byte of it is read. Closed on deinit.
public final class OpenedFile {
    public let path: String
    public let info: FileStatus
    private let file: OwnedDescriptor

    /// Takes `file`, opened from `path`, and reads what it is (`fstat`).
    private init(_ file: OwnedDescriptor, path: String) throws(SystemError) {
        var info = stat()
        guard fstat(file.number, &info) == 0 else { throw .last("fstat", detail: path) }
        self.info = FileStatus(info)
        self.path = path
        self.file = file
    }

    /// Opens `path` (`O_NONBLOCK`, so a FIFO cannot block the open); nil when it does not exist.
    /// `followingLinks: false` adds `O_NOFOLLOW`: a symbolic link at `path` fails with
    /// `Errno.symbolicLink`, as OpenSSH opens the files it trusts.
    public static func open(_ path: String, followingLinks: Bool = true) throws(SystemError) -> OpenedFile? {
        guard
            let file = OwnedDescriptor.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW))
        else {
            let error = SystemError.last("open", detail: path)
            if error.errno == .noSuchFile { return nil }
            throw error
        }
        return try OpenedFile(file, path: path)
    }

    public var isRegular: Bool { info.kind == .regular }

    /// "a FIFO", "a character device", …: what the file is when it is not a regular file.
    public var kind: String { info.kind == .symbolicLink ? "not a regular file" : info.kind.described }

    /// Throws unless this is a regular file.
    public func requireRegular() throws(SystemError) {
        guard isRegular else {
            throw SystemError("open", .invalidArgument, detail: path, reason: "it is \(kind), not a regular file")
        }
    }

    /// Every byte, refusing a file of more than `limit` bytes (checked before reading, and
    /// again while reading, for a file that grows).
    public func readAll(limit: Int) throws(SystemError) -> [UInt8] {
        let tooLarge = SystemError(
            "read", .fileTooLarge, detail: path, reason: "larger than \(Self.size(limit)), more than octunnel reads")
        guard info.size <= limit else { throw tooLarge }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = file.read(&buffer, buffer.count) // EINTR retried there
            if count < 0 { throw SystemError.last("read", detail: path) }
            if count == 0 { break }
            result += buffer[..<count]
            guard result.count <= limit else { throw tooLarge }
        }
        return result
    }

    private static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes >> 10) KiB"
    }
}

/// An exclusive advisory lock (`flock`) on a lock file, held until `release` or deinit.
public final class FileLock {
    private let file: OwnedDescriptor

    /// Blocks until the exclusive lock on `path` is held. A symbolic link at `path` is refused
    /// (ELOOP), never followed: whoever planted it would have octunnel create its target.
    public init(path: String) throws(SystemError) {
        guard let file = OwnedDescriptor.open(path, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600) else {
            throw SystemError.last("open", detail: path)
        }
        let number = file.number
        try retryingEINTR("flock", detail: path) { flock(number, LOCK_EX) }
        self.file = file
    }

    /// Runs `body` while holding the lock on `path`.
    public static func withLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: path)
        defer { lock.release() }
        return try body()
    }

    /// Closes the lock file, which releases the lock; later calls do nothing.
    public func release() { file.close() }
}
