import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("libssh2's send path", .ownThreads)
struct BatchedSocketIOTests {
    @Test(
        "while batching, every send is taken whole (never EAGAIN, so no packet is half-sent), even with a peer that does not read; flush delivers it in order"
    )
    func neverRefusesASend() throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        let io = BatchedSocketIO(socket: OwnedDescriptor(pair[0]))
        io.setBatching(true)
        // 8 MiB in packet-sized sends, far more than the socket buffers hold.
        let packet = (0..<32_768).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var accepted = 0
        for _ in 0..<256 {
            let n = packet.withUnsafeBytes { io.send($0.baseAddress!, $0.count, 0) }
            #expect(n == packet.count)
            accepted += max(0, n)
        }
        #expect(accepted == 256 * packet.count)
        #expect(io.flush())
        #expect(io.backlog > 0, "the peer reads nothing, so bytes must still wait")
        // The peer reads; the loop's flushes deliver everything, in order.
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while received.count < accepted {
            #expect(io.flush())
            let n = read(pair[1], &buffer, buffer.count)
            if n > 0 { received += buffer[..<n] }
        }
        #expect(io.backlog == 0)
        #expect(received.count == accepted)
        #expect((0..<256).allSatisfy { Array(received[($0 * packet.count)..<(($0 + 1) * packet.count)]) == packet })
    }

    @Test(
        "a round that read something ends with its ACK sent at once: the socket leaves delayed-ACK mode (sshd's Nagle would otherwise hold its next packet 40 ms)"
    )
    func acknowledgesWhatARoundRead() throws {
        let (listener, port) = try Sockets.listen(bind: "127.0.0.1", port: 0)
        defer { listener.close() }
        let socket = try Sockets.connect(host: "127.0.0.1", port: port, timeout: 5)
        defer { socket.close() }
        let mine = socket.number
        let peer = closeOnExecAccept(listener.number)
        try #require(peer >= 0)
        defer { close(peer) }
        socket.setNonBlocking(false)
        let io = BatchedSocketIO(socket: socket)
        var byte: UInt8 = 1
        func quickAck() -> Int32 {
            var value: Int32 = -1
            var size = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(mine, Int32(IPPROTO_TCP), TCP_QUICKACK, &value, &size)
            return value
        }
        // Request and answer a few times, answering at once: Linux then delays ACKs ("pingpong").
        for _ in 0..<4 {
            #expect(write(peer, &byte, 1) == 1)
            #expect(io.recv(&byte, 1, 0) == 1)
            #expect(write(mine, &byte, 1) == 1)
            #expect(read(peer, &byte, 1) == 1)
        }
        try #require(quickAck() == 0, "the kernel did not enter delayed-ACK mode, so this test cannot show anything")
        io.acknowledgeReceived()
        #expect(quickAck() == 1, "the round read a byte: its ACK goes now and delayed-ACK mode is left")
        // Back into delayed-ACK mode without reading through libssh2's path: nothing is owed,
        // so the next round's end makes no system call and the mode stays.
        for _ in 0..<4 {
            #expect(write(peer, &byte, 1) == 1)
            #expect(read(mine, &byte, 1) == 1)
            #expect(write(mine, &byte, 1) == 1)
            #expect(read(peer, &byte, 1) == 1)
        }
        try #require(quickAck() == 0)
        io.acknowledgeReceived()
        #expect(quickAck() == 0)
    }
}
