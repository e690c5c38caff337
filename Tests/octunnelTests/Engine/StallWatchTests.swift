import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Bytes a stream holds back move as soon as the session can take them, with no help from the
/// stall watch; and when a stream really is stuck, the watch names it and moves it again
/// (issue 29's missed wake-up, issue 25's "a test that makes the watch fire").
///
/// Both run `tunnel up` with a 4 KiB send-buffer high-water mark (`OCTUNNEL_SEND_HIGH_WATER`),
/// so a stream holds client bytes back after nearly every channel write and the loop's last
/// flush of each round drains the buffer below the mark: nothing a poll watches changes then.
@Suite("held bytes and the stall watch", .ownThreads, .timeLimit(.minutes(3)))
struct StallWatchTests {
    /// A server that reads everything, then answers "got N".
    private static func sink() throws -> TCPTestServer {
        try TCPTestServer { fd in
            let count = readAll(fd).count
            writeAll(fd, Array("got \(count)".utf8))
            shutdown(fd, Int32(SHUT_WR))
        }
    }

    private static func upload(_ size: Int, port: Int) -> String {
        let answer = sendAndReceive(port: port, payload: patternBytes(size, seed: 29), timeout: 90) ?? []
        return String(decoding: answer, as: UTF8.self)
    }

    @Test("with a tiny send buffer, 4 MiB upstream move without a stall: bytes held back move once the buffer drains")
    func heldBytesMoveWhenTheBufferDrains() throws {
        let server = try Self.sink()
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(
            remotePort: server.port, extra: ["--no-health", "--keepalive", "60"],
            launcher: ["/usr/bin/env", "OCTUNNEL_SEND_HIGH_WATER=4096"])
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        let started = Date()
        let answer = Self.upload(4 << 20, port: port)
        print(
            "4 MiB upstream with a 4 KiB high-water mark: \(String(format: "%.2f", Date().timeIntervalSince(started))) s"
        )
        #expect(answer == "got \(4 << 20)", "\(tunnel.stderrText)")
        #expect(!tunnel.stderrText.contains("stalled"), "a stream waited for the stall watch: \(tunnel.stderrText)")
    }

    @Test(
        "a stream really stuck (its held bytes left to the watch on purpose) is named by the stall watch, moved again and delivered whole; status counts it"
    )
    func theWatchFindsAStuckStream() throws {
        let server = try Self.sink()
        let fixture = try TunnelFixture()
        // Keepalive at 60 s: nothing but the watch moves the stream within the socket timeout.
        let tunnel = try fixture.up(
            remotePort: server.port, extra: ["--no-health", "--keepalive", "60"],
            launcher: ["/usr/bin/env", "OCTUNNEL_SEND_HIGH_WATER=4096", "OCTUNNEL_FAULT=stuck-upstream"])
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        let size = 96 * 1024
        let answer = Self.upload(size, port: port)
        #expect(answer == "got \(size)", "\(tunnel.stderrText)")
        let status = try fixture.run(["tunnel", "status", "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status)")
        let counted = try #require(object["stalls"] as? Int, "\(status.stdout)")
        // The tunnel prints each stall before it moves the stream again, but its stderr reaches
        // this process through a reader thread: under load the last line can come after the
        // answer (a loaded CI run read 2 lines while status already counted 3).
        let named = { tunnel.stderr.filter { $0.contains("stalled for") } }
        #expect(
            waitUntil(timeout: 30) { named().count >= counted },
            "status counts \(counted) stalls, stderr names \(named().count): \(tunnel.stderrText)")
        #expect(!named().isEmpty, "the stuck stream was never named: \(tunnel.stderrText)")
        #expect(
            named().allSatisfy {
                $0.contains("bytes from the client waiting for the VPS") && $0.contains("moving it again")
            }, "\(named())")
        #expect(
            named().count == counted, "status counts \(counted) stalls, stderr names \(named().count): \(status.stdout)"
        )
    }
}
