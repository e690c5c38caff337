import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

nonisolated(unsafe) private var caughtSignal: Int32 = 0

/// The wrappers in System/ do what the calls they replaced did: the flags a socket starts
/// with, sends that never raise SIGPIPE, EINTR-free reads and writes, a peer's credentials,
/// sigaction, and macOS's routing messages (parsed here, though only macOS sends them).
@Suite("System/: the syscall wrappers", .ownThreads)
struct SystemCallTests {
    private func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Syscall.SocketType.stream.value, 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    /// `call` returns -1 with `code` in errno, read right after it.
    private func expectFails<Result: BinaryInteger>(
        with code: Int32, sourceLocation: SourceLocation = #_sourceLocation, _ call: () -> Result
    ) {
        let result = call()
        let actual = errno
        #expect(result == -1, sourceLocation: sourceLocation)
        #expect(actual == code, sourceLocation: sourceLocation)
    }

    @Test("a socket starts non-blocking and close-on-exec only when asked")
    func socketFlags() throws {
        let both = Syscall.socket(AF_INET, .stream, [.nonBlocking, .closeOnExec])
        try #require(both >= 0)
        defer { Syscall.close(both) }
        #expect(fcntl(both, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(both, F_GETFD) & FD_CLOEXEC != 0)
        let blocking = Syscall.socket(AF_INET, .stream, .closeOnExec)
        try #require(blocking >= 0)
        defer { Syscall.close(blocking) }
        #expect(fcntl(blocking, F_GETFL) & O_NONBLOCK == 0)
        #expect(fcntl(blocking, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("a send to a closed peer fails with EPIPE and raises no SIGPIPE")
    func sendWithoutSIGPIPE() throws {
        let (mine, peer) = try socketPair()
        defer { Syscall.close(mine) }
        Syscall.close(peer)
        let bytes: [UInt8] = [1, 2, 3]
        expectFails(with: EPIPE) { Syscall.sendNoSignal(mine, bytes, bytes.count) }
    }

    @Test("read and write move bytes; open of a missing file is -1 with ENOENT")
    func descriptorCalls() throws {
        let (mine, peer) = try socketPair()
        defer { Syscall.close(mine); Syscall.close(peer) }
        let bytes: [UInt8] = Array("hello".utf8)
        #expect(Syscall.write(mine, bytes, bytes.count) == 5)
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(Syscall.read(peer, &buffer, buffer.count) == 5)
        #expect(Array(buffer[..<5]) == bytes)
        let tree = try TempDirectory("syscall")
        expectFails(with: ENOENT) { Syscall.open(tree.file("missing"), O_RDONLY | O_CLOEXEC) }
    }

    @Test("the peer of a Unix socket is this process and this user")
    func peerCredentials() throws {
        let (mine, peer) = try socketPair()
        defer { Syscall.close(peer) }
        let credentials = try #require(Syscall.peerCredentials(mine))
        #expect(credentials.pid == getpid())
        #expect(credentials.uid == geteuid())
        let owned = OwnedDescriptor(mine)
        #expect(owned.peerPID == getpid())
        #expect(owned.peerUID == geteuid())
    }

    @Test("a connect started to a loopback listener finishes with no error; to a closed port, refused")
    func startConnect() throws {
        let (listener, port) = try Sockets.listen(bind: "127.0.0.1", port: 0)
        defer { listener.close() }
        let address = try #require(try Sockets.resolve(host: "127.0.0.1", port: port).first)
        func outcome(_ start: Sockets.ConnectStart) -> Errno? {
            switch start {
            case .failed(let code): return code
            case .connected(let socket):
                socket.close()
                return nil
            case .inProgress(let socket):
                defer { socket.close() }
                _ = socket.waitWritable(milliseconds: 5000)
                return socket.pendingError
            }
        }
        #expect(outcome(Sockets.startConnect(family: address.family, address: address.address)) == nil)
        let closed = try #require(try Sockets.resolve(host: "127.0.0.1", port: freePort()).first)
        #expect(outcome(Sockets.startConnect(family: closed.family, address: closed.address)) == .connectionRefused)
    }

    @Test("a signal handler runs, and the action it replaced comes back")
    func signalHandler() throws {
        caughtSignal = 0
        Syscall.unblockSignals([Signal(rawValue: SIGUSR2)])
        let previous = Syscall.setSignalHandler(SIGUSR2) { caughtSignal = $0 }
        raise(SIGUSR2)
        Syscall.restoreSignalAction(SIGUSR2, previous)
        #expect(caughtSignal == SIGUSR2)
    }

    @Test(
        "macOS routing messages: RTM_NEWADDR and RTM_DELADDR name their address, RTM_ADD and RTM_IFINFO read as routes and link"
    )
    func routeMessages() {
        // ifa_msghdr (20 bytes): msglen, version 5, type, ifam_addrs (little-endian), flags, index, metric.
        func header(length: Int, type: UInt8, addresses: UInt8) -> [UInt8] {
            [UInt8(length), 0, 5, type, addresses, 0, 0, 0] + [UInt8](repeating: 0, count: 12)
        }
        // RTA_NETMASK (0x4) as an 8-byte sockaddr_in, then RTA_IFA (0x20) 192.168.1.20.
        var newAddress = header(length: 44, type: 0xc, addresses: 0x24)
        newAddress += [8, 2, 0, 0, 255, 255, 255, 0]
        newAddress += [16, 2, 0, 0, 192, 168, 1, 20] + [UInt8](repeating: 0, count: 8)
        // RTA_IFA alone: a 28-byte sockaddr_in6 (AF_INET6 is 30 on macOS) for 2001:db8::5.
        var removed = header(length: 48, type: 0xd, addresses: 0x20)
        removed +=
            [28, 30, 0, 0, 0, 0, 0, 0] + [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [5, 0, 0, 0, 0]
        let routeAdded: [UInt8] = [92, 0, 5, 0x1] + [UInt8](repeating: 0, count: 88)
        let link: [UInt8] = [8, 0, 5, 0xe, 0, 0, 0, 0]
        let changes = RoutingSocket.parseRouteMessages(newAddress + removed + routeAdded + link)
        #expect(
            changes == [.addressAdded("192.168.1.20"), .addressRemoved("2001:db8::5"), .routeChanged, .linkChanged])
        // A message cut short is read no further, not out of bounds.
        #expect(RoutingSocket.parseRouteMessages(Array(newAddress.prefix(30))) == [])
    }
}
