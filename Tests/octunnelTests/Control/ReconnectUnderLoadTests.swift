import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Make before break against the built binary, a real sshd and the OpenCode stand-in: planned
/// reconnects while a client keeps requesting (issue 56's goal: 0 failed requests).
@Suite("tunnel reconnect under requests", .ownThreads, .timeLimit(.minutes(3)))
struct ReconnectUnderLoadTests {
    @Test(
        "five tunnel reconnects while a client requests every 50 ms, on a kept-open connection and on new ones: no request fails"
    )
    func fiveReconnectsLoseNothing() throws {
        // Notifications on (the default): the event follower moves its stream to each new session.
        try TunnelFixture.withTunnelToStandIn { fixture, tunnel, port in
            let requests = HealthRequests(port: port)
            let thread = Thread { requests.run(every: 0.05) }
            thread.start()
            defer { requests.stop() }
            try #require(
                waitUntil(timeout: 10) { requests.tally.served >= 4 }, "\(requests.tally) \(tunnel.stderrText)")
            for _ in 0..<5 {
                let result = try fixture.run(["tunnel", "reconnect"])
                #expect(result.status == 0, "\(result) \(tunnel.stderrText)")
                let served = requests.tally.served
                #expect(waitUntil(timeout: 10) { requests.tally.served >= served + 4 })
            }
            // The kept-open connection holds the first session: it drains beside the current one. The
            // sessions between drain away as their last streams end (the notification follower's
            // event stream moves once the new session's health test passes). The pool refilling on
            // the new session while requests come may also have signed in a burst's extra session.
            let status = Self.waitForSessions(fixture, draining: 1, atMost: 2, tunnel)
            #expect(status["reconnects"] as? Int == 5, "\(status)")
            let human = try fixture.run(["tunnel", "status"])
            #expect(human.stdout.contains("1 replaced, keeping its connections until they end"), "\(human.stdout)")
            requests.stop()
            while !requests.stopped { Thread.sleep(forTimeInterval: 0.01) }
            let tally = requests.tally
            print("five reconnects under requests every 50 ms: \(tally.served) served, \(tally.failed.count) failed")
            let log = tunnel.stderrText
            #expect(
                tally.failed.isEmpty,
                "\(tally.failed.count) failed, \(tally.served) served: \(tally.failed.prefix(5))\n\(log)")
            // Its connection closed, the first session goes: one session left.
            // The draining session goes. (Starved of CPU, requests can queue past the burst rule's 8 while
            // a reconnect's session signs in: an extra then signs in, and a connection it served in its burst
            // may keep it a while; seen in CI with two busy loops, sessions 3 with 1 extra. A case to study.)
            _ = Self.waitForSessions(fixture, draining: 0, atMost: 1, tunnel)
            #expect(!tunnel.stderrText.contains("session lost"), "\(tunnel.stderrText)")
        }
    }

    /// Waits (hang guard 10 s) until `tunnel status` counts `draining` draining sessions and at
    /// most `atMost` in all, a burst's extra session aside; expects it to come, and answers the last status.
    static func waitForSessions(
        _ fixture: TunnelFixture, draining: Int, atMost: Int, _ tunnel: RunningProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> [String: Any] {
        var status: [String: Any] = [:]
        #expect(
            waitUntil(timeout: 10) {
                status = (try? fixture.status()) ?? [:]
                let extra = (status["burstSessions"] as? Int ?? 0) > 0 ? 1 : 0
                return status["sessionsDraining"] as? Int == draining
                    && (status["sessions"] as? Int ?? 0) - extra <= atMost
            }, "\(status) \(tunnel.stderrText)", sourceLocation: sourceLocation)
        return status
    }
}

/// `GET /global/health` every interval, alternately on one connection kept open (HTTP/1.1
/// keep-alive, as a browser's) and on a new connection closed after it; counts what failed.
final class HealthRequests: @unchecked Sendable {
    let port: Int
    private let lock = NSLock()
    private var served = 0
    private var failed: [String] = []
    private var stopping = false
    private var done = false

    init(port: Int) { self.port = port }

    var tally: (served: Int, failed: [String]) {
        lock.lock(); defer { lock.unlock() }
        return (served, failed)
    }

    var stopped: Bool {
        lock.lock(); defer { lock.unlock() }
        return done
    }

    func stop() {
        lock.lock(); defer { lock.unlock() }
        stopping = true
    }

    private var isStopping: Bool {
        lock.lock(); defer { lock.unlock() }
        return stopping
    }

    func run(every interval: Double) {
        var kept: Int32 = -1
        var index = 0
        while !isStopping {
            let started = Date()
            let keep = index % 2 == 0
            var fd = keep ? kept : -1
            if fd < 0 {
                fd = connectLoopback(port)
                if fd >= 0 { setSocketTimeout(fd, seconds: 10) }
            }
            let problem =
                fd < 0
                ? "request \(index): no connection" : Self.request(fd, close: !keep).map { "request \(index): \($0)" }
            if keep { kept = problem == nil ? fd : -1 }
            if fd >= 0 && (!keep || problem != nil) { close(fd) }
            lock.lock()
            if let problem { failed.append(problem) } else { served += 1 }
            lock.unlock()
            index += 1
            let pause = interval - Date().timeIntervalSince(started)
            if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        }
        if kept >= 0 { close(kept) }
        lock.lock(); done = true; lock.unlock()
    }

    /// One request on `fd`; nil when a 200 with its whole body came back, else what went wrong.
    static func request(_ fd: Int32, close: Bool) -> String? {
        let text =
            "GET /global/health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n"
        guard writeAll(fd, Array(text.utf8)) else { return "write failed" }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = headerEnd(bytes) {
                let head = String(decoding: bytes[..<end], as: UTF8.self)
                guard head.hasPrefix("HTTP/1.1 200") else { return "answered \(head.prefix(40))" }
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if bytes.count - end >= length { return nil }
            }
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 {
                return bytes.isEmpty ? "no answer (connection ended)" : "answer cut after \(bytes.count) bytes"
            }
            bytes += buffer[..<count]
        }
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        let end: [UInt8] = [13, 10, 13, 10]
        for index in 0...(bytes.count - 4) where Array(bytes[index..<index + 4]) == end { return index + 4 }
        return nil
    }
}
