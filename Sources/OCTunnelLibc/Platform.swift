// The C calls octunnel's System/ layer makes that read the same on Linux and macOS, written once
// (issue 57): each forwards to the C library by its module-qualified name (`OCTunnelLibc.read` is
// Glibc's or Darwin's `read`, re-exported by Linux.swift or Darwin.swift, the only files that
// import either), since a bare `read` inside `Platform` would name the wrapper itself. What
// differs between the two systems is in those two files, as extensions of this table.

/// The C library as System/ calls it: one member per call or constant, the same names on every platform.
public enum Platform {
    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        OCTunnelLibc.open(path, flags, mode)
    }
    public static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        OCTunnelLibc.read(fd, buffer, count)
    }
    public static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        OCTunnelLibc.write(fd, buffer, count)
    }
    public static func close(_ fd: Int32) -> Int32 { OCTunnelLibc.close(fd) }
    public static func shutdown(_ fd: Int32, _ how: Int32) -> Int32 { OCTunnelLibc.shutdown(fd, how) }
    public static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        OCTunnelLibc.connect(fd, address, length)
    }
    public static func bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        OCTunnelLibc.bind(fd, address, length)
    }
    public static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 { OCTunnelLibc.listen(fd, backlog) }
    public static func send(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32) -> Int {
        OCTunnelLibc.send(fd, buffer, length, flags)
    }
    public static func recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ length: Int, _ flags: Int32) -> Int {
        OCTunnelLibc.recv(fd, buffer, length, flags)
    }
    public static func poll(_ fds: UnsafeMutablePointer<pollfd>, _ count: nfds_t, _ timeout: Int32) -> Int32 {
        OCTunnelLibc.poll(fds, count, timeout)
    }
    /// `signal(2)`; the handler's type is `sig_t` on macOS, `__sighandler_t` on Linux: the same C function type.
    public static func signal(_ signal: Int32, _ handler: (@convention(c) (Int32) -> Void)?) {
        _ = OCTunnelLibc.signal(signal, handler)
    }
}
