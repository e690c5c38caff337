import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Streams survive sshd's key re-exchange (`RekeyLimit`) under load, in both roles, and a
/// stream whose channel window is full still delivers what the VPS sends (issue 17).
@Suite("key re-exchange under load", .ownThreads, .timeLimit(.minutes(4)))
struct RekeyTests {
    /// An sshd that re-keys every MiB and `tunnel up` through it to an echo server; the tunnel
    /// is stopped after `body`.
    static func withRekeyingEchoTunnel(
        _ body: (_ fixture: TunnelFixture, _ tunnel: RunningProcess, _ port: Int) throws -> Void
    ) throws {
        let fixture = try TunnelFixture(sshdConfig: SSHDServer.rekeyLimit("1M"))
        let (tunnel, port) = try fixture.upToEcho(extra: ["--no-health"])
        defer { tunnel.stopGracefullyOrKill() }
        try body(fixture, tunnel, port)
    }

    /// Both ends octunnel through `fixture`'s sshd: `home up` carrying a free VPS port to
    /// `homePort` here, and `tunnel up` to that port; `body` gets them and the laptop's local
    /// port once it forwards, and both are stopped after it.
    static func withBothEnds(
        _ fixture: TunnelFixture, homePort: Int,
        _ body: (_ homeSide: RunningProcess, _ laptop: RunningProcess, _ port: Int) async throws -> Void
    ) async throws {
        let remotePort = freePort()
        let homeSide = try fixture.homeUp(remotePort: remotePort, homePort: homePort, extra: ["--no-health"])
        defer { homeSide.stopGracefullyOrKill() }
        try #require(try await offPool { homeSide.homeListening() } != nil, "\(homeSide.stderrText)")
        let laptop = try fixture.up(remotePort: remotePort, extra: ["--no-health"])
        defer { laptop.stopGracefullyOrKill() }
        let port = try #require(try await offPool { laptop.forwardedPort() }, "\(laptop.stderrText)")
        try await body(homeSide, laptop, port)
    }

    @Test(
        "a stream whose channel window is full (its server is not reading yet) still delivers the 16 MiB the server sends first"
    )
    func fullWindowStillDelivers() throws {
        // The server sends everything before it reads anything, as a server answering a big
        // upload with a big response may: the client's bytes fill the channel's window, and
        // the server's can only arrive if the tunnel keeps reading the channel meanwhile.
        let size = 16 << 20
        let server = try TCPTestServer { fd in
            guard writeAll(fd, bulkPattern(size, seed: 7)) else { return }
            _ = readAll(fd, limit: size)
            shutdown(fd, Int32(SHUT_WR))
        }
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(remotePort: server.port, extra: ["--no-health"])
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        let failures = exchange(
            port: port, sending: bulkPattern(size, seed: 8), expecting: bulkPattern(size, seed: 7), name: "stream")
        #expect(failures.isEmpty, "\(failures)\n\(tunnel.stderrText)")
        #expect(!tunnel.stderrText.contains("stalled"), "\(tunnel.stderrText)")
    }

    @Test("tunnel up, RekeyLimit 1M: 8 concurrent streams echo 16 MiB each way, every byte intact, 3 rounds, no stall")
    func tunnelUpEcho() throws {
        try Self.withRekeyingEchoTunnel { fixture, tunnel, port in
            for round in 0..<3 {
                let failures = echoConcurrently(port: port, streams: 8, bytes: 16 << 20, seedBase: UInt64(100 * round))
                try #require(failures.isEmpty, "round \(round): \(failures)\n\(tunnel.stderrText)")
            }
            #expect(!tunnel.stderrText.contains("stalled"), "\(tunnel.stderrText)")
            #expect(
                tunnel.stderr.filter { $0.hasPrefix("connected to") }.count == 1,
                "one session throughout: \(tunnel.stderrText)")
            // status counts stalls (none here).
            let status = try fixture.run(["tunnel", "status", "--json"])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status)")
            #expect(object["stalls"] as? Int == 0, "\(status.stdout)")
        }
    }

    @Test(
        "home up: a client that sends 48 MiB before it reads gets them to a home server that answers while it reads (the home stream's window is full meanwhile)"
    )
    func homeUpFullWindowStillDelivers() async throws {
        // The home server writes and reads at once; the laptop client reads only after it has
        // sent everything. The home stream's channel window fills with the server's answer
        // while the client's bytes still have to come down the same channel to the server.
        // 48 MiB: more than every buffer on the way (socket buffers, windows) holds.
        let size = 48 << 20
        let server = try TCPTestServer { fd in
            let written = DispatchSemaphore(value: 0)
            Thread {
                writeAll(fd, bulkPattern(size, seed: 9)); written.signal()
            }.start()
            _ = readAll(fd, limit: size)
            written.wait() // the writer returns before this handler does, and the server closes fd
            shutdown(fd, Int32(SHUT_WR))
        }
        let fixture = try TunnelFixture()
        try await Self.withBothEnds(fixture, homePort: server.port) { homeSide, laptop, port in
            let failure = try await offPool { () -> String? in
                let fd = connectLoopback(port)
                guard fd >= 0 else { return "connect failed" }
                defer { close(fd) }
                setSocketTimeout(fd, seconds: 20)
                guard writeAll(fd, bulkPattern(size, seed: 10)) else {
                    return "the client's \(size >> 20) MiB did not get through (\(String(cString: strerror(errno))))"
                }
                let back = readAll(fd, limit: size)
                return back == bulkPattern(size, seed: 9) ? nil : "got \(back.count) of \(size) bytes back"
            }
            #expect(failure == nil, "\(failure ?? "")\nlaptop:\n\(laptop.stderrText)\nhome:\n\(homeSide.stderrText)")
            #expect(!homeSide.stderrText.contains("stalled") && !laptop.stderrText.contains("stalled"))
        }
    }

    @Test(
        "home up, RekeyLimit 1M on the VPS: 8 concurrent streams echo 16 MiB each way through both ends, every byte intact"
    )
    func homeUpEcho() async throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture(sshdConfig: SSHDServer.rekeyLimit("1M"))
        try await Self.withBothEnds(fixture, homePort: echo.port) { homeSide, laptop, port in
            let failures = try await offPool {
                echoConcurrently(port: port, streams: 8, bytes: 16 << 20, seedBase: 300)
            }
            #expect(failures.isEmpty, "\(failures)\nlaptop:\n\(laptop.stderrText)\nhome:\n\(homeSide.stderrText)")
            #expect(
                !homeSide.stderrText.contains("stalled") && !laptop.stderrText.contains("stalled"),
                "\(laptop.stderrText)\n\(homeSide.stderrText)")
            #expect(homeSide.stderr.filter { $0.hasPrefix("connected to") }.count == 1, "\(homeSide.stderrText)")
        }
    }

    @Test(
        "RekeyLimit 1M: a client that stops reading for 3 s while another stream drives re-keys gets every byte once it reads again"
    )
    func rekeyWhileClientNotReading() throws {
        try Self.withRekeyingEchoTunnel { fixture, tunnel, port in
            let size = 32 << 20
            let connection = try #require(ClientConnection(port: port, timeout: 30))
            defer { connection.finish() }
            let payload = bulkPattern(size, seed: 11)
            connection.startWriting(payload)
            // The driver: 16 MiB each way on another stream, about 32 re-keys, while `fd` is not read.
            let driverDone = DispatchSemaphore(value: 0)
            let driver = Thread {
                _ = echoConcurrently(port: port, streams: 1, bytes: 16 << 20, seedBase: 12); driverDone.signal()
            }
            driver.start()
            defer { driverDone.wait() } // the driver ends before the tunnel it uses is stopped
            Thread.sleep(forTimeInterval: 3) // the client not reading is the scenario, not synchronisation
            let back = connection.readToEnd(limit: size)
            #expect(
                back.count == size && back == payload, "got \(back.count) of \(size) bytes back\n\(tunnel.stderrText)")
            #expect(roundTrip(port: port, seed: 13), "\(tunnel.stderrText)")
            #expect(!tunnel.stderrText.contains("stalled"), "\(tunnel.stderrText)")
        }
    }

    @Test(
        "RekeyLimit 1M: bursts of 6 new connections are served while the pool refills and a bulk stream drives re-keys")
    func rekeyWhilePoolRefills() throws {
        try Self.withRekeyingEchoTunnel { fixture, tunnel, port in
            let bulk = FailureBox()
            let bulkDone = DispatchSemaphore(value: 0)
            Thread {
                for line in echoConcurrently(port: port, streams: 2, bytes: 32 << 20, seedBase: 20) { bulk.add(line) }
                bulkDone.signal()
            }.start()
            var bursts = 0
            let short = FailureBox()
            // Bursts of 6 (a browser's connections) until the bulk streams are done: each takes
            // pooled channels, so the pool refills (one open at a time) across re-keys.
            var bulkEnded = false
            while bursts < 200 {
                if bulkDone.wait(timeout: .now()) == .success { bulkEnded = true; break }
                bursts += 1
                let burst = bursts
                DispatchQueue.concurrentPerform(iterations: 6) { index in
                    if !roundTrip(port: port, seed: UInt64(1000 * burst + index)) {
                        short.add("burst \(burst) connection \(index)")
                    }
                }
            }
            if !bulkEnded { bulkDone.wait() } // the bulk thread ends before the tunnel it uses is stopped
            #expect(bursts >= 2, "the bulk streams ended before two bursts")
            #expect(bulk.lines.isEmpty, "\(bulk.lines)\n\(tunnel.stderrText)")
            #expect(short.lines.isEmpty, "\(short.lines)\n\(tunnel.stderrText)")
            #expect(!tunnel.stderrText.contains("stalled"), "\(tunnel.stderrText)")
        }
    }

    @Test(
        "RekeyLimit default 1s, both ends octunnel: an event stream stays live and a request every 250 ms is answered, for 12 s"
    )
    func timeBasedRekeys() async throws {
        let backend = try OpenCodeStandIn(heartbeat: 0.5)
        let fixture = try TunnelFixture(sshdConfig: SSHDServer.rekeyLimit("default", seconds: 1) + "\nLogLevel DEBUG1")
        try await Self.withBothEnds(fixture, homePort: backend.port) { homeSide, laptop, port in
            // 12 s in the suite; the issue's full minute: OCTUNNEL_REKEY_SECONDS=60.
            let seconds = Double(ProcessInfo.processInfo.environment["OCTUNNEL_REKEY_SECONDS"] ?? "") ?? 12
            let result = try await offPool { eventStreamAndRequests(port: port, seconds: seconds, every: 0.25) }
            #expect(
                result.failed.isEmpty, "\(result.failed)\nlaptop:\n\(laptop.stderrText)\nhome:\n\(homeSide.stderrText)")
            #expect(Double(result.requests) >= seconds * 2.5, "only \(result.requests) requests in \(seconds) s")
            // Heartbeats every 0.5 s: the stream is live to the end (the last one under 5 s before it,
            // a guard for a loaded machine; a dead stream stays quiet for the rest of the run).
            #expect(Double(result.heartbeats) >= seconds && result.quietAtEnd < 5, "\(result)")
            let rekeys = fixture.sshd.log.components(separatedBy: "SSH2_MSG_NEWKEYS received").count - 1
            #expect(Double(rekeys) >= 2 + seconds, "sshd re-keyed only \(rekeys) times (2 of them the first exchanges)")
            print(
                "time-based re-keys: \(result.requests) requests in \(Int(seconds)) s, all answered: \(result.failed.isEmpty), \(result.heartbeats) heartbeats, last \(String(format: "%.2f", result.quietAtEnd)) s before the end, \(rekeys) re-keys"
            )
            #expect(!homeSide.stderrText.contains("stalled") && !laptop.stderrText.contains("stalled"))
        }
    }
}

/// Holds `GET /global/event` open on `port` while a `GET /global/health` goes out every
/// `every` seconds for `seconds`; counts heartbeats and answers.
func eventStreamAndRequests(
    port: Int, seconds: Double, every: Double
) -> (requests: Int, failed: [String], heartbeats: Int, quietAtEnd: Double) {
    guard let events = ClientConnection(port: port, timeout: 3) else {
        return (0, ["event stream: connect failed"], 0, seconds)
    }
    // The reader is joined before the socket closes: left running, it read the next socket
    // opened under the same number, another test's (issue 29).
    defer { events.finish() }
    _ = writeAll(events.fd, Array("GET /global/event HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".utf8))
    let heartbeats = ByteCounter()
    let lastBeat = ByteCounter()
    let start = Date()
    let text = TextBox()
    events.startReading { chunk in
        let beats = text.append(String(decoding: chunk, as: UTF8.self), counting: "server.heartbeat")
        if beats != heartbeats.value {
            heartbeats.set(beats)
            lastBeat.set(Int(Date().timeIntervalSince(start) * 1000))
        }
        return true
    }
    var failed: [String] = []
    var requests = 0
    while Date().timeIntervalSince(start) < seconds {
        requests += 1
        let answer = httpGet(port: port, path: "/global/health") ?? ""
        if !answer.hasPrefix("HTTP/1.0 200") && !answer.hasPrefix("HTTP/1.1 200") {
            failed.append(
                "request \(requests) at \(String(format: "%.2f", Date().timeIntervalSince(start))) s: \(answer.prefix(40))"
            )
        }
        Thread.sleep(forTimeInterval: every) // the request rate is the scenario, not synchronisation
    }
    let quiet = Date().timeIntervalSince(start) - Double(lastBeat.value) / 1000
    return (requests, failed, heartbeats.value, quiet)
}

/// Sends `sending` on a new connection to `port` while reading, and checks the answer is
/// `expecting`; returns what failed.
/// The writer is joined before the socket closes (`ClientConnection`), even when this returns
/// at the first differing read.
func exchange(port: Int, sending: [UInt8], expecting: [UInt8], name: String, stallAfter: Int = 20) -> [String] {
    guard let connection = ClientConnection(port: port, timeout: stallAfter) else { return ["\(name): connect failed"] }
    defer { connection.finish() }
    let fd = connection.fd
    connection.startWriting(sending)
    var buffer = [UInt8](repeating: 0, count: 65536)
    var received = 0
    while true {
        let count = read(fd, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        if count < 0 {
            return [
                "\(name): stalled (\(String(cString: strerror(errno)))) after \(received) of \(expecting.count) bytes back, \(connection.sent) sent"
            ]
        }
        if count == 0 { break }
        if received + count > expecting.count { return ["\(name): more bytes than expected"] }
        let same = buffer.withUnsafeBytes { got in
            expecting.withUnsafeBytes { memcmp(got.baseAddress!, $0.baseAddress! + received, count) }
        }
        if same != 0 { return ["\(name): bytes \(received)..<\(received + count) differ"] }
        received += count
    }
    return received == expecting.count
        ? [] : ["\(name): EOF after \(received) of \(expecting.count) bytes, \(connection.sent) sent"]
}

/// Echoes `bytes` through `streams` concurrent connections to `port` (an echo server behind
/// the tunnel), writing and reading at once; returns one line per stream that failed: how far
/// it got and how (no progress for `stallAfter` seconds, a short answer, a differing byte).
func echoConcurrently(port: Int, streams: Int, bytes: Int, seedBase: UInt64 = 100, stallAfter: Int = 20) -> [String] {
    let results = FailureBox()
    DispatchQueue.concurrentPerform(iterations: streams) { index in
        let payload = bulkPattern(bytes, seed: seedBase + UInt64(index))
        for line in exchange(
            port: port, sending: payload, expecting: payload, name: "stream \(index)", stallAfter: stallAfter)
        {
            results.add(line)
        }
    }
    return results.lines
}

/// `count` bytes of `patternBytes` made cheaply: a pseudo-random block of 1 MiB + 7 bytes
/// repeated, so a lost, repeated or reordered packet still shows as a differing byte.
func bulkPattern(_ count: Int, seed: UInt64) -> [UInt8] {
    let block = patternBytes(min(count, (1 << 20) + 7), seed: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { target in
        block.withUnsafeBytes { source in
            var offset = 0
            while offset < count {
                let n = min(source.count, count - offset)
                memcpy(target.baseAddress! + offset, source.baseAddress!, n)
                offset += n
            }
        }
    }
    return bytes
}

/// Thread-safe failure lines.
final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String] = []
    func add(_ line: String) { lock.lock(); values.append(line); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return values }
}

/// Text read by one thread, with how often a word occurs in it so far.
final class TextBox: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    func append(_ more: String, counting word: String) -> Int {
        lock.lock(); defer { lock.unlock() }
        text += more
        return text.components(separatedBy: word).count - 1
    }
}
