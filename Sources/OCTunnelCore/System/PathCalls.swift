import OCTunnelLibc

/// Calls on paths, each failure a `SystemError` with the call's name, the path and its errno.
extension Syscall {
    /// `mkdir(2)`; with `existing`, something already there (EEXIST) is no failure.
    static func makeDirectory(_ path: String, mode: mode_t, existing: Bool = false) throws(SystemError) {
        guard mkdir(path, mode) == 0 else {
            let error = SystemError.last("mkdir", detail: path)
            if existing && error.errno == .fileExists { return }
            throw error
        }
    }

    /// `chmod(2)`.
    static func changeMode(_ path: String, _ mode: mode_t) throws(SystemError) {
        guard chmod(path, mode) == 0 else { throw .last("chmod", detail: path) }
    }

    /// `stat(2)` (`lstat(2)` with `followingLinks: false`); nil when nothing is there (ENOENT).
    static func fileStatus(_ path: String, followingLinks: Bool = true) throws(SystemError) -> FileStatus? {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else {
            let error = SystemError.last(followingLinks ? "stat" : "lstat", detail: path)
            if error.errno == .noSuchFile { return nil }
            throw error
        }
        return FileStatus(info)
    }

    /// `unlink(2)`; nothing there (ENOENT) is no failure.
    static func removeFile(_ path: String) throws(SystemError) {
        guard unlink(path) == 0 else {
            let error = SystemError.last("unlink", detail: path)
            if error.errno == .noSuchFile { return }
            throw error
        }
    }

    /// `link(2)`: `path` becomes another name of `existing`.
    static func hardLink(_ existing: String, as path: String) throws(SystemError) {
        guard link(existing, path) == 0 else { throw .last("link", detail: path) }
    }

    /// `gethostname(2)`; empty when it cannot be read.
    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `geteuid(2)`.
    static var effectiveUserID: UInt32 { UInt32(geteuid()) }

    /// `getuid(2)`: the real user (launchd's `gui/UID` domain is the login user's).
    static var userID: UInt32 { UInt32(getuid()) }

    /// `getpid(2)`.
    static var processID: Int32 { Int32(getpid()) }
}

extension Syscall {
    /// `access(X_OK)`: whether this process may run `path`.
    static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    /// Whether `path` opens for reading and writing (a terminal: `/dev/tty`), closed again at once.
    static func canOpenForReadingAndWriting(_ path: String) -> Bool { canOpen(path, O_RDWR) }

    /// Whether `path` opens with `flags` (close-on-exec; closed again at once).
    static func canOpen(_ path: String, _ flags: Int32) -> Bool {
        let fd = open(path, flags | O_CLOEXEC)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    /// The passwd entry of the effective user (`getpwuid(geteuid())`): login name and home.
    static var passwordEntry: (name: String, home: String)? {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name, let home = entry.pointee.pw_dir else {
            return nil
        }
        return (String(cString: name), String(cString: home))
    }

    /// `_exit(2)`: ends the process now, async-signal-safe (no atexit handlers, no flushing).
    static func exitNow(_ status: Int32) -> Never { _exit(status) }
}
