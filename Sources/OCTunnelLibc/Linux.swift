// Linux's C library for octunnel's System/ layer (issue 49): the one file that imports Glibc,
// and the calls and constants whose names, types or shape differ from macOS's (Darwin.swift
// holds the same, line for line; a member added here goes into both). The calls alike on both
// are in Platform.swift, written once. System/ imports this module and writes each wrapper once.

#if canImport(Glibc)
    @_exported import Glibc

    extension Platform {
        /// `shutdown`'s directions.
        public static let sendingEnd = Int32(SHUT_WR), bothEnds = Int32(SHUT_RDWR)
        /// `send` flags that keep SIGPIPE away: `MSG_NOSIGNAL` (macOS sets `SO_NOSIGPIPE` on the socket instead).
        public static let noSignal = Int32(MSG_NOSIGNAL)
        /// `SOCK_STREAM` and `SOCK_RAW` as `socket(2)` takes them (Glibc imports them as an enum).
        public static let streamSocket = Int32(SOCK_STREAM.rawValue), rawSocket = Int32(SOCK_RAW.rawValue)
        public static let datagramSocket = Int32(SOCK_DGRAM.rawValue)

        /// `socket(2)` with its flags set by the call itself (`SOCK_NONBLOCK`, `SOCK_CLOEXEC`).
        public static func socket(
            _ family: Int32, _ type: Int32, _ number: Int32, nonBlocking: Bool, closeOnExec: Bool
        ) -> Int32 {
            var kind = type
            if nonBlocking { kind |= Int32(SOCK_NONBLOCK.rawValue) }
            if closeOnExec { kind |= Int32(SOCK_CLOEXEC.rawValue) }
            return Glibc.socket(family, kind, number)
        }

        /// `accept4(SOCK_CLOEXEC | SOCK_NONBLOCK)`: no window in which a child spawned meanwhile
        /// inherits the connection. The descriptor or -1, `errno` set.
        public static func accept(_ listener: Int32) -> Int32 {
            gnuAccept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        }

        /// `pipe2(O_CLOEXEC [| O_NONBLOCK])` into `ends`; 0 or -1, `errno` set; `call` names it.
        public static func pipe(_ ends: inout [Int32], nonBlocking: Bool) -> (result: Int32, call: String) {
            (gnuPipe2(&ends, O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)), "pipe2")
        }

        /// posix_spawn's file actions and attributes: structs here (opaque pointers on macOS).
        public typealias SpawnFileActions = posix_spawn_file_actions_t
        public typealias SpawnAttributes = posix_spawnattr_t
        public static func emptySpawnFileActions() -> SpawnFileActions { posix_spawn_file_actions_t() }
        public static func emptySpawnAttributes() -> SpawnAttributes { posix_spawnattr_t() }

        /// This process's environment block (`environ`).
        public static var environment: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? { environ }

        /// Puts `handler` into `action` (the union Glibc calls `__sigaction_handler`).
        public static func setHandler(_ action: inout sigaction, _ handler: @convention(c) (Int32) -> Void) {
            action.__sigaction_handler.sa_handler = handler
        }

        /// `TCP_QUICKACK`: acknowledge what arrived now, not after the delayed-ACK timer.
        public static func acknowledgeNow(_ fd: Int32) {
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
        }

        /// Bytes in the kernel's send queue the peer has not acknowledged (`ioctl(SIOCOUTQ)`); nil
        /// when it cannot be read.
        public static func unsentBytes(_ fd: Int32) -> Int? {
            var queued: Int32 = 0
            return ioctl(fd, UInt(TIOCOUTQ), &queued) == 0 ? Int(queued) : nil
        }

        /// The process id and user id at the other end of a Unix socket (`SO_PEERCRED`).
        public static func peerCredentials(_ fd: Int32) -> (pid: pid_t, uid: uid_t)? {
            // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc hides the type without _GNU_SOURCE).
            var credentials = [UInt32](repeating: 0, count: 3)
            var length = socklen_t(MemoryLayout<UInt32>.size * 3)
            guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, length >= 12 else { return nil }
            return (pid_t(bitPattern: credentials[0]), credentials[1])
        }

        /// Seconds spent suspended since boot: `CLOCK_BOOTTIME` minus `CLOCK_MONOTONIC`.
        public static func suspendedSeconds() -> Double {
            var boot = timespec(), mono = timespec()
            clock_gettime(CLOCK_BOOTTIME, &boot)
            clock_gettime(CLOCK_MONOTONIC, &mono)
            return Double(boot.tv_sec - mono.tv_sec) + Double(boot.tv_nsec - mono.tv_nsec) / 1e9
        }
    }

    /// glibc's `accept4`, which Swift's Glibc module leaves out (declared for _GNU_SOURCE only):
    /// looked up once by name.
    private let gnuAccept4:
        @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32 = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "accept4") else {
                fatalError("glibc has no accept4")
            }
            return unsafeBitCast(
                symbol,
                to: (@convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) ->
                    Int32).self)
        }()

    /// glibc's `pipe2`, which Swift's Glibc module leaves out (glibc declares it for _GNU_SOURCE
    /// only): looked up once by name, as the test harness does.
    private let gnuPipe2: @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else {
            fatalError("glibc has no pipe2")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    }()
#endif
