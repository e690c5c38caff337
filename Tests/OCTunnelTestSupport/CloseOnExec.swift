import Foundation

// Descriptors the test process makes are close-on-exec from the call that makes them.
//
// The suites run in parallel in one process, and a child any test spawns (sshd, octunnel,
// ssh-agent, a stand-in) inherits every descriptor that is not close-on-exec at that instant.
// A pipe's write end inherited so keeps the reader from ever seeing EOF; a socket inherited so
// outlives its close (the peer never sees the FIN), and a probe socket keeps its port bound.
// `pipe()` or `accept()` followed by `fcntl(FD_CLOEXEC)` leaves that instant open: in a CI run
// beside two busy loops (22:41), AgentAndPassphraseTests' `runProcess` of a `tunnel check`
// waited 247 s for EOF and ended 0.9 s after the long-lived-streams test stopped its processes.
// `pipe2`, `accept4` and `SOCK_CLOEXEC` close it. Swift's Glibc module does not declare the
// first two (glibc declares them for _GNU_SOURCE only), so they are looked up once by name.

private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
private typealias Accept4 =
    @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32

private let pipe2Function: Pipe2 = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else { fatalError("glibc has no pipe2") }
    return unsafeBitCast(symbol, to: Pipe2.self)
}()

private let accept4Function: Accept4 = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "accept4") else {
        fatalError("glibc has no accept4")
    }
    return unsafeBitCast(symbol, to: Accept4.self)
}()

/// A pipe, both ends close-on-exec (`pipe2(O_CLOEXEC)`): [read end, write end], or nil.
public func closeOnExecPipe() -> [Int32]? {
    var fds: [Int32] = [-1, -1]
    return pipe2Function(&fds, O_CLOEXEC) == 0 ? fds : nil
}

/// A TCP (or Unix, with `AF_UNIX`) stream socket, close-on-exec (`SOCK_CLOEXEC`); -1 on failure.
public func closeOnExecStreamSocket(_ family: Int32 = AF_INET) -> Int32 {
    socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
}

/// `accept4(listener, nil, nil, SOCK_CLOEXEC)`, EINTR retried: the accepted socket is close-on-exec.
public func closeOnExecAccept(_ listener: Int32) -> Int32 {
    while true {
        let fd = accept4Function(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
        if fd >= 0 || errno != EINTR { return fd }
    }
}
