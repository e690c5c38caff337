// The one `#if` per platform for the calls octunnel must name qualified (a wrapper of the same
// name in `Syscall`, or a type of the same name, would shadow the C function) and for the
// constants whose types differ: every wrapper in System/ above this is written once. The two
// tables are the same calls, line for line; a call added here goes into both.

#if canImport(Glibc)
import Glibc

enum Platform {
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Glibc.open(path, flags, mode) }
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { Glibc.read(fd, buffer, count) }
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Glibc.write(fd, buffer, count) }
    static func close(_ fd: Int32) -> Int32 { Glibc.close(fd) }
    static func shutdown(_ fd: Int32, _ how: Int32) -> Int32 { Glibc.shutdown(fd, how) }
    static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Glibc.connect(fd, address, length) }
    static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Glibc.bind(fd, address, length) }
    static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 { Glibc.listen(fd, backlog) }
    static func send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32) -> Int { Glibc.send(fd, buffer, length, flags) }
    static func recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ length: Int, _ flags: Int32) -> Int { Glibc.recv(fd, buffer, length, flags) }
    static func poll(_ fds: UnsafeMutablePointer<pollfd>, _ count: nfds_t, _ timeout: Int32) -> Int32 { Glibc.poll(fds, count, timeout) }
    static func signal(_ signal: Int32, _ handler: __sighandler_t?) { _ = Glibc.signal(signal, handler) }

    /// `shutdown`'s directions.
    static let sendingEnd = Int32(SHUT_WR), bothEnds = Int32(SHUT_RDWR)
    /// `send` flags that keep SIGPIPE away: `MSG_NOSIGNAL` (macOS sets `SO_NOSIGPIPE` on the socket instead).
    static let noSignal = Int32(MSG_NOSIGNAL)
}

#elseif canImport(Darwin)
import Darwin

enum Platform {
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Darwin.open(path, flags, mode) }
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { Darwin.read(fd, buffer, count) }
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Darwin.write(fd, buffer, count) }
    static func close(_ fd: Int32) -> Int32 { Darwin.close(fd) }
    static func shutdown(_ fd: Int32, _ how: Int32) -> Int32 { Darwin.shutdown(fd, how) }
    static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Darwin.connect(fd, address, length) }
    static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Darwin.bind(fd, address, length) }
    static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 { Darwin.listen(fd, backlog) }
    static func send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32) -> Int { Darwin.send(fd, buffer, length, flags) }
    static func recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ length: Int, _ flags: Int32) -> Int { Darwin.recv(fd, buffer, length, flags) }
    static func poll(_ fds: UnsafeMutablePointer<pollfd>, _ count: nfds_t, _ timeout: Int32) -> Int32 { Darwin.poll(fds, count, timeout) }
    static func signal(_ signal: Int32, _ handler: sig_t?) { _ = Darwin.signal(signal, handler) }

    static let sendingEnd = SHUT_WR, bothEnds = SHUT_RDWR
    static let noSignal: Int32 = 0
}
#endif
