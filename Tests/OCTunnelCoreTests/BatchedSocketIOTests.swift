import Foundation
@testable import OCTunnelCore
import Testing

@Suite("libssh2's send path")
struct BatchedSocketIOTests {
    @Test("while batching, every send is taken whole (never EAGAIN, so no packet is half-sent), even with a peer that does not read; flush delivers it in order")
    func neverRefusesASend() throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        let io = BatchedSocketIO(socket: pair[0])
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
}
