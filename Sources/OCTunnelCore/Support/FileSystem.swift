import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Atomic, durable file writes: a temp file in the same directory, created with its final mode,
/// written, fsynced, renamed into place, and the directory fsynced.
public enum AtomicFile {
    /// Replaces (or creates) `path` with `bytes`, readable per `mode` from the first byte on.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(SystemError) {
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
    public static func create(_ bytes: [UInt8], at path: String, mode: mode_t) throws(SystemError) {
        let temp = try writeTemp(bytes, beside: path, mode: mode)
        defer { unlink(temp) }
        try retryingEINTR("link", detail: path) { link(temp, path) }
        try syncDirectory(of: path)
    }

    private static func writeTemp(_ bytes: [UInt8], beside path: String, mode: mode_t) throws(SystemError) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        var temp = ""
        var fd: Int32 = -1
        for _ in 0..<16 {
            let suffix = (try? Crypto.randomBytes(6).map { String(format: "%02x", $0) }.joined()) ?? String(UInt32.random(in: 0...UInt32.max), radix: 16)
            temp = (directory.isEmpty ? "" : directory + "/") + ".\(name).tmp-\(suffix)"
            fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw SystemError("open", detail: temp) }
        defer { close(fd) }
        do {
            // umask may have narrowed the mode; set the exact one before any byte is written.
            try retryingEINTR("fchmod", detail: temp) { fchmod(fd, mode) }
            var written = 0
            while written < bytes.count {
                let offset = written
                let count = try retryingEINTR("write", detail: temp) {
                    bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
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
        guard fd >= 0 else { throw SystemError("open", detail: directory) }
        defer { close(fd) }
        try retryingEINTR("fsync", detail: directory) { fsync(fd) }
    }
}

/// Whole-file reads that tell a missing file apart from an unreadable one.
public enum FileBytes {
    /// The file's bytes, or nil when it does not exist.
    public static func read(_ path: String) throws(SystemError) -> [UInt8]? {
        try readWithStatus(path)?.bytes
    }

    /// What was opened (`fstat`, so a symlink counts as its target, checked on the very file
    /// read) and its bytes; nil when it does not exist. Only regular files are read.
    public static func readWithStatus(_ path: String) throws(SystemError) -> (info: stat, bytes: [UInt8])? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw SystemError("open", detail: path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("fstat", detail: path) }
        guard info.st_mode & S_IFMT == S_IFREG else { return (info, []) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = try retryingEINTR("read", detail: path) { Glibc.read(fd, &buffer, buffer.count) }
            if count == 0 { break }
            result += buffer[..<count]
        }
        return (info, result)
    }

    /// `lstat` of a path, or nil when it does not exist.
    public static func status(_ path: String) throws(SystemError) -> stat? {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return nil }
            throw SystemError("stat", detail: path)
        }
        return info
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}

/// An exclusive advisory lock (`flock`) on a lock file, held until `release` or deinit.
public final class FileLock {
    private var fd: Int32

    /// Blocks until the exclusive lock on `path` is held.
    public init(path: String) throws(SystemError) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("open", detail: path) }
        do {
            let lockFD = fd
            try retryingEINTR("flock", detail: path) { flock(lockFD, LOCK_EX) }
        } catch {
            close(fd)
            throw error
        }
    }

    /// Runs `body` while holding the lock on `path`.
    public static func withLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let lock = try FileLock(path: path)
        defer { lock.release() }
        return try body()
    }

    public func release() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    deinit { release() }
}

/// A path as the user typed it, made absolute: `~` expanded, a relative path taken from the
/// working directory (for paths that are saved, or used after the directory may change).
public enum UserPath {
    public static func absolute(_ path: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        if expanded.hasPrefix("/") { return expanded }
        return FileManager.default.currentDirectoryPath + "/" + expanded
    }
}
