// macOS's C library for octunnel's System/ layer (issue 49): the one file that imports Darwin,
// and the calls and constants whose names, types or shape differ from Linux's (Linux.swift
// holds the same, line for line; a member added here goes into both). The calls alike on both
// are in Platform.swift, written once. System/ imports this module and writes each wrapper once.

#if canImport(Darwin)
    @_exported import Darwin

    extension Platform {
        /// `shutdown`'s directions.
        public static let sendingEnd = SHUT_WR, bothEnds = SHUT_RDWR
        /// No `MSG_NOSIGNAL` here: every stream socket gets `SO_NOSIGPIPE` when it is made.
        public static let noSignal: Int32 = 0
        /// `SOCK_STREAM` and `SOCK_RAW` as `socket(2)` takes them.
        public static let streamSocket = SOCK_STREAM, rawSocket = SOCK_RAW, datagramSocket = SOCK_DGRAM

        /// `socket(2)`; macOS has no `SOCK_NONBLOCK` / `SOCK_CLOEXEC`, so the flags are set with
        /// `fcntl` right after, and SIGPIPE is turned off for a stream socket (`SO_NOSIGPIPE`).
        public static func socket(
            _ family: Int32, _ type: Int32, _ number: Int32, nonBlocking: Bool, closeOnExec: Bool
        ) -> Int32 {
            let fd = Darwin.socket(family, type, number)
            guard fd >= 0 else { return fd }
            if closeOnExec { setCloseOnExec(fd) }
            if nonBlocking { setNonBlocking(fd) }
            if type == SOCK_STREAM { noSignalPipe(fd) }
            return fd
        }

        /// `accept(2)`, then close-on-exec, non-blocking and `SO_NOSIGPIPE` at once. The descriptor
        /// or -1, `errno` set.
        public static func accept(_ listener: Int32) -> Int32 {
            let fd = Darwin.accept(listener, nil, nil)
            if fd >= 0 {
                setCloseOnExec(fd)
                setNonBlocking(fd)
                noSignalPipe(fd)
            }
            return fd
        }

        /// `pipe(2)` into `ends`, each end then close-on-exec (and non-blocking when asked); 0 or
        /// -1, `errno` set; `call` names it.
        public static func pipe(_ ends: inout [Int32], nonBlocking: Bool) -> (result: Int32, call: String) {
            guard Darwin.pipe(&ends) == 0 else { return (-1, "pipe") }
            for end in ends {
                setCloseOnExec(end)
                if nonBlocking { setNonBlocking(end) }
            }
            return (0, "pipe")
        }

        /// posix_spawn's file actions and attributes: opaque pointers here, taken as optionals.
        public typealias SpawnFileActions = posix_spawn_file_actions_t?
        public typealias SpawnAttributes = posix_spawnattr_t?
        public static func emptySpawnFileActions() -> SpawnFileActions { nil }
        public static func emptySpawnAttributes() -> SpawnAttributes { nil }

        /// This process's environment block (`_NSGetEnviron()`).
        public static var environment: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? { _NSGetEnviron().pointee }

        /// Puts `handler` into `action` (the union Darwin calls `__sigaction_u`).
        public static func setHandler(_ action: inout sigaction, _ handler: @convention(c) (Int32) -> Void) {
            action.__sigaction_u.__sa_handler = handler
        }

        /// No `TCP_QUICKACK` here: the delayed-ACK timer stays.
        public static func acknowledgeNow(_ fd: Int32) {}

        /// Bytes in the kernel's send queue the peer has not acknowledged (`getsockopt(SO_NWRITE)`);
        /// nil when it cannot be read.
        public static func unsentBytes(_ fd: Int32) -> Int? {
            var queued: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, SOL_SOCKET, SO_NWRITE, &queued, &length) == 0 ? Int(queued) : nil
        }

        /// The process id and user id at the other end of a Unix socket (`LOCAL_PEERPID`, `getpeereid`).
        public static func peerCredentials(_ fd: Int32) -> (pid: pid_t, uid: uid_t)? {
            var pid: pid_t = 0
            var length = socklen_t(MemoryLayout<pid_t>.size)
            var uid: uid_t = 0, gid: gid_t = 0
            guard getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &pid, &length) == 0, getpeereid(fd, &uid, &gid) == 0 else {
                return nil
            }
            return (pid, uid)
        }

        /// Seconds spent suspended since boot: `mach_continuous_time` minus `mach_absolute_time`.
        public static func suspendedSeconds() -> Double {
            var base = mach_timebase_info_data_t()
            mach_timebase_info(&base)
            let ticks = Double(mach_continuous_time() &- mach_absolute_time())
            return ticks * Double(base.numer) / Double(base.denom) / 1e9
        }

        private static func setCloseOnExec(_ fd: Int32) { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        private static func setNonBlocking(_ fd: Int32) { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }

        /// `setsockopt(SO_NOSIGPIPE)`: a send to a closed peer fails with EPIPE instead of signalling.
        private static func noSignalPipe(_ fd: Int32) {
            var one: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        }
    }
#endif
