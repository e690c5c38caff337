import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Streams survive sshd's key re-exchange (`RekeyLimit`) under load, in both roles.
@Suite("key re-exchange under load", .timeLimit(.minutes(4)))
struct RekeyTests {
    @Test("tunnel up, RekeyLimit 1M: 8 concurrent streams echo 16 MiB each way, every byte intact")
    func tunnelUpEcho() throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture(sshdConfig: SSHDServer.rekeyLimit("1M"))
        let tunnel = try fixture.up(remotePort: echo.port, extra: ["--no-health"])
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        let failures = echoConcurrently(port: port, streams: 8, bytes: 16 << 20)
        #expect(failures.isEmpty, "\(failures)\n\(tunnel.stderrText)")
    }
}

/// Echoes `bytes` through `streams` concurrent connections to `port` (an echo server behind
/// the tunnel), writing and reading at once; returns one line per stream that failed: how far
/// it got and how (no progress for `stallAfter` seconds, a short answer, a differing byte).
func echoConcurrently(port: Int, streams: Int, bytes: Int, seedBase: UInt64 = 100, stallAfter: Int = 20) -> [String] {
    let results = FailureBox()
    DispatchQueue.concurrentPerform(iterations: streams) { index in
        let fd = connectLoopback(port)
        guard fd >= 0 else { return results.add("stream \(index): connect failed") }
        defer { close(fd) }
        setSocketTimeout(fd, seconds: stallAfter)
        let payload = patternBytes(bytes, seed: seedBase + UInt64(index))
        let written = ByteCounter()
        let writer = Thread {
            var offset = 0
            while offset < payload.count {
                let n = payload.withUnsafeBytes { send(fd, $0.baseAddress! + offset, min(65536, payload.count - offset), Int32(MSG_NOSIGNAL)) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
                written.set(offset)
            }
            shutdown(fd, Int32(SHUT_WR))
        }
        writer.start()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var received = 0
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                return results.add("stream \(index): stalled (\(String(cString: strerror(errno)))) after \(received) of \(bytes) bytes back, \(written.value) sent")
            }
            if count == 0 { break }
            if received + count > bytes { return results.add("stream \(index): more bytes than sent") }
            for offset in 0..<count where buffer[offset] != payload[received + offset] {
                return results.add("stream \(index): byte \(received + offset) differs")
            }
            received += count
        }
        if received != bytes { results.add("stream \(index): EOF after \(received) of \(bytes) bytes, \(written.value) sent") }
    }
    return results.lines
}

/// Thread-safe failure lines.
final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String] = []
    func add(_ line: String) { lock.lock(); values.append(line); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return values }
}

/// A thread-safe byte count.
final class ByteCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func set(_ value: Int) { lock.lock(); count = value; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
