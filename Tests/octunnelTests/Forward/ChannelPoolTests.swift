import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A server behind the VPS that numbers its connections, greets each with "HELLO n\n" before
/// any request, answers one line with "OK line", and can be told to close idle connections.
final class GreetingServer: @unchecked Sendable {
    private let lock = NSLock()
    private var opened = 0
    private var closedIdle = 0
    private var closeIdle = false
    private(set) var server: TCPTestServer!

    init(greet: Bool = true) throws {
        server = try TCPTestServer { [self] fd in
            let number = next()
            if greet { writeAll(fd, Array("HELLO \(number)\n".utf8)) }
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&pfd, 1, 10) == 0 {
                    if line.isEmpty && shouldCloseIdle() { return noteClosedIdle() }
                    continue
                }
                guard read(fd, &byte, 1) == 1 else { return }
                line.append(byte)
                if byte == UInt8(ascii: "\n") { break }
            }
            writeAll(fd, Array("OK ".utf8) + line)
            shutdown(fd, Int32(SHUT_WR))
            _ = readAll(fd)
        }
    }

    var port: Int { server.port }
    var connections: Int { lock.lock(); defer { lock.unlock() }; return opened }
    var idleClosed: Int { lock.lock(); defer { lock.unlock() }; return closedIdle }
    func setCloseIdle(_ on: Bool) { lock.lock(); closeIdle = on; lock.unlock() }
    private func next() -> Int { lock.lock(); defer { lock.unlock() }; opened += 1; return opened }
    private func shouldCloseIdle() -> Bool { lock.lock(); defer { lock.unlock() }; return closeIdle }
    private func noteClosedIdle() { lock.lock(); closedIdle += 1; lock.unlock() }
}

/// One request through the tunnel: sends "ping i\n", returns everything the server sent.
func ask(port: Int, _ text: String) -> String {
    let fd = connectLoopback(port)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    setSocketTimeout(fd, seconds: 10)
    guard writeAll(fd, Array("\(text)\n".utf8)) else { return "" }
    return String(decoding: readAll(fd), as: UTF8.self)
}

@Suite("channels opened ahead of need", .ownThreads, .timeLimit(.minutes(3)))
struct ChannelPoolTests {
    @Test("a pooled channel the server closed is never given to a client; what the server sent first is delivered")
    func closedPooledChannelNeverHandedOut() throws {
        let backend = try GreetingServer()
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(remotePort: backend.port, extra: ["--warm", "4", "--no-health"])
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        #expect(
            waitUntil(timeout: 10) { backend.connections >= 4 },
            "the pool did not fill: \(backend.connections) connections")
        // The server closes every idle connection: all four pooled channels die unused.
        backend.setCloseIdle(true)
        #expect(waitUntil(timeout: 10) { backend.idleClosed >= 4 })
        backend.setCloseIdle(false)
        // The tunnel replaces them (paced by its backoff); once all four are new, ask through each.
        #expect(
            waitUntil(timeout: 30) { backend.connections >= 8 },
            "the pool was not refilled: \(backend.connections) connections")
        var greetings = Set<Int>()
        for index in 0..<8 {
            let answer = ask(port: port, "ping \(index)")
            let lines = answer.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(
                lines.count == 3 && lines[0].hasPrefix("HELLO ") && lines[1] == "OK ping \(index)" && lines[2].isEmpty,
                "client \(index) got \(answer.debugDescription)")
            if let number = Int(lines.first?.dropFirst(6) ?? "") {
                #expect(number > 4, "client \(index) was given pooled channel \(number), which the server had closed")
                greetings.insert(number)
            }
        }
        #expect(greetings.count == 8, "two clients shared a connection: \(greetings.sorted())")
        #expect(tunnel.isRunning)
    }

    @Test("the pool refills after a burst and follows demand; --warm fixes its size")
    func poolRefillsAfterBurst() throws {
        let backend = try GreetingServer(greet: false)
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(remotePort: backend.port, extra: ["--no-health"])
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        // Following demand, a tunnel whose session has just started expects a browser's six.
        #expect(waitUntil(timeout: 10) { backend.connections == 6 })
        #expect(!waitUntil(timeout: 1) { backend.connections > 6 }, "more than six idle channels before any demand")
        // A burst of 8 at once: 6 take pooled channels, 2 wait for opens; each gets an answer,
        // then the pool grows to 8 behind them.
        let fds = (0..<8).map { _ in connectLoopback(port) }
        defer { fds.forEach { close($0) } }
        for (index, fd) in fds.enumerated() {
            setSocketTimeout(fd, seconds: 10)
            #expect(writeAll(fd, Array("burst \(index)\n".utf8)))
        }
        for (index, fd) in fds.enumerated() {
            #expect(String(decoding: readAll(fd), as: UTF8.self) == "OK burst \(index)\n")
        }
        #expect(
            waitUntil(timeout: 10) { backend.connections == 16 },
            "\(backend.connections) connections: 8 used, 8 pooled expected")
        #expect(
            !waitUntil(timeout: 1) { backend.connections > 16 }, "the pool grew past the burst: \(backend.connections)")

        let fixed = try fixture.up(remotePort: backend.port, extra: ["--no-health", "--warm", "3"])
        let fixedPort = try #require(fixed.forwardedPort(), "\(fixed.stderrText)")
        #expect(waitUntil(timeout: 10) { backend.connections == 19 })
        #expect(ask(port: fixedPort, "one") == "OK one\n")
        #expect(waitUntil(timeout: 10) { backend.connections == 20 }, "the used channel was not replaced")
        #expect(!waitUntil(timeout: 1) { backend.connections > 20 })
    }

    @Test("a dead home side (every connection closed at once) costs at most one open per backoff step, reported early")
    func deadHomeSideBacksOff() throws {
        let opens = ResultCounter()
        let dead = try TCPTestServer { _ in opens.increment() }
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(remotePort: dead.port, extra: ["--warm", "4", "--no-health"])
        _ = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        // Said before any client came.
        #expect(tunnel.waitForLine(containing: "nothing listens on VPS", timeout: 10) != nil, "\(tunnel.stderrText)")
        #expect(waitUntil(timeout: 10) { opens.value > 0 })
        let first = try #require(opens.times.first)
        _ = tunnel.waitForExit(timeout: max(0, 9.5 - Date().timeIntervalSince(first)))
        // The first fill (up to 4 opens) goes out before any close is seen; after that, steps of
        // 1, 2, 4 s: one open at about 1, 3 and 7 s.
        let offsets = opens.times.map { $0.timeIntervalSince(first) }
        let later = offsets.filter { $0 > 0.5 }
        let described = offsets.map { String(format: "%.2f", $0) }.joined(separator: " ")
        #expect(later.count <= 3 && later.count >= 2, "opens at \(described) s: expected one at about 1, 3 and 7 s")
        #expect(
            zip(later, later.dropFirst()).allSatisfy { $1 - $0 > 1.5 },
            "opens at \(described) s: closer than the backoff step")
        #expect(
            offsets.count - later.count <= 4, "opens at \(described) s: the first fill opened more than the pool size")
        #expect(
            tunnel.stderr.filter { $0.contains("nothing listens on VPS") }.count <= 2, "the event is not rate-limited")
        #expect(tunnel.isRunning)
    }
}

/// A thread-safe counter, and when each increment came. Both read under the lock: the test
/// reads the times while the server's threads still append (ThreadSanitizer's race in
/// deadHomeSideBacksOff, docs/sanitizers.md).
final class ResultCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var stamps: [Date] = []
    func increment() { lock.lock(); count += 1; stamps.append(Date()); lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    var times: [Date] { lock.lock(); defer { lock.unlock() }; return stamps }
}
