import Foundation
import OCTunnelTestSupport
import Testing

/// The test harness never lets one test's bytes or closes reach another test's socket: the
/// suites run side by side in one process, which shares one table of descriptor numbers, and
/// a number closed by one test is handed to the next socket any test opens (issue 29).
@Suite("test harness: no thread or close outlives what it owns", .ownThreads)
struct HarnessTests {
    private func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) != -1 }

    @Test(
        "descriptors the harness makes are close-on-exec from the call that makes them: a child spawned while they are open holds none (an inherited pipe end kept a reader from EOF for 247 s)"
    )
    func childrenInheritNothing() throws {
        let accepted = LockedValue<Int32>(-1)
        let server = try TCPTestServer { fd in
            accepted.set(fd)
            var byte: UInt8 = 0
            _ = read(fd, &byte, 1) // until the client closes
        }
        defer { server.stop() }
        let client = connectLoopback(server.port)
        try #require(client >= 0)
        defer { close(client) }
        try #require(waitUntil(timeout: 30) { accepted.get() >= 0 }, "the server never accepted")
        let pipe = try #require(closeOnExecPipe())
        defer { pipe.forEach { close($0) } }
        let unix = closeOnExecStreamSocket(AF_UNIX)
        defer { close(unix) }
        let ours = [server.listenerNumber, accepted.get(), client, pipe[0], pipe[1], unix]

        // The child lists what it holds; RunningProcess's own pipes are its 0, 1 and 2.
        let child = try run("/bin/sh", ["-c", "ls -l /proc/$$/fd"])
        try #require(child.status == 0, "\(child.stderr)")
        let held = Set(
            child.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let target = line.split(separator: " ").last,
                    target.hasPrefix("socket:[") || target.hasPrefix("pipe:[")
                else { return nil }
                return String(target)
            })
        for fd in ours {
            var info = stat()
            try #require(fstat(fd, &info) == 0)
            let name = (info.st_mode & S_IFMT == S_IFSOCK ? "socket:[" : "pipe:[") + "\(info.st_ino)]"
            #expect(!held.contains(name), "a child inherited descriptor \(fd) (\(name)): \(child.stdout)")
        }
    }

    @Test(
        "a TCPTestServer stopped by hand and then dropped closes its listener once: sockets opened in between stay open"
    )
    func stoppedServerClosesOnce() throws {
        var server: TCPTestServer? = try TCPTestServer.echo()
        let listener = try #require(server?.listenerNumber)
        server?.stop()
        // The listener's number is free now: open sockets until one gets it (the lowest free
        // number goes first, but another test's thread may take it before this one).
        var pairs: [[Int32]] = []
        while pairs.count < 64 && !pairs.joined().contains(listener) {
            var fds: [Int32] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
            pairs.append(fds)
        }
        defer { pairs.joined().forEach { close($0) } }
        if !pairs.joined().contains(listener) {
            try Test.cancel("another thread of the test process kept descriptor \(listener) for 64 sockets in a row")
        }
        weak let dropped = server
        server = nil // deinit: stop() again, once its threads let go of it
        #expect(waitUntil(timeout: 30) { dropped == nil }, "the server's threads still hold it 30 s after stop()")
        let closed = pairs.joined().filter { !isOpen($0) }
        #expect(closed.isEmpty, "the dropped server closed descriptors it no longer owned: \(closed)")
    }

    @Test(
        "a client connection's writer has returned before its socket is closed, even when the reader stops first and the writer is blocked"
    )
    func writerNeverOutlivesItsSocket() throws {
        // A server that accepts and never reads: the writer blocks once the socket buffers fill.
        let holding = DispatchSemaphore(value: 0)
        let server = try TCPTestServer { _ in holding.wait() }
        defer { holding.signal(); server.stop() }
        let connection = try #require(ClientConnection(port: server.port, timeout: 60))
        connection.startWriting(patternBytes(32 << 20, seed: 1))
        #expect(waitUntil(timeout: 30) { connection.sent > 0 })
        #expect(
            !connection.writerHasReturned,
            "32 MiB cannot all fit in the socket buffers: the writer should still be sending")
        connection.finish()
        #expect(connection.writerHasReturned, "finish() closed the socket while its writer still ran")
    }

    @Test("a client connection's reader has returned before its socket is closed, even while the server keeps sending")
    func readerNeverOutlivesItsSocket() throws {
        // A server that sends a heartbeat every 10 ms until the client goes: the reader always
        // has another read to make (the re-key test's event stream, whose reader once read on).
        let server = try TCPTestServer { fd in
            while writeAll(fd, Array("data: server.heartbeat\n\n".utf8)) { usleep(10_000) }
        }
        defer { server.stop() }
        let connection = try #require(ClientConnection(port: server.port, timeout: 60))
        let chunks = ByteCounter()
        connection.startReading { _ in
            chunks.add(1); return true
        }
        #expect(waitUntil(timeout: 30) { chunks.value >= 3 })
        #expect(!connection.readerHasReturned, "the server still sends: the reader should still be reading")
        connection.finish()
        #expect(connection.readerHasReturned, "finish() closed the socket while its reader still ran")
    }

    @Test("a lost head is named as such: the answer from its first byte is what was sent from byte 65536 on")
    func lostHeadIsNamed() {
        let sent = patternBytes(256 * 1024, seed: 1121)
        let lostHead = mismatchDescription(got: Array(sent[65536...]), expected: sent)
        #expect(
            lostHead
                == "196608 bytes back of 262144, first difference at 0; from there the answer is what was sent from byte 65536 on: 65536 bytes missing"
        )
        #expect(
            mismatchDescription(got: Array(sent[..<1000]), expected: sent).hasSuffix(
                "(a short answer: the rest never came)"))
        #expect(
            mismatchDescription(got: patternBytes(1000, seed: 7), expected: sent).hasSuffix(
                "the bytes there are nowhere in what was sent"))
    }

    @Test(
        "a test's body runs on a thread of its own, not on the cooperative pool, and every suite says so (.ownThreads)")
    func bodiesRunOffThePool() throws {
        // Without the trait this body would hold one of the pool's threads (two here) while it
        // runs; blocking bodies there kept other tests and their time limits waiting (OwnThreads).
        #expect(ThreadPerJob.isCurrent, "this test's body runs on the cooperative pool")
        let tests = packageRoot + "/Tests"
        let files = try FileManager.default.subpathsOfDirectory(atPath: tests).filter { $0.hasSuffix(".swift") }
        var without: [String] = []
        for file in files {
            let text = try String(contentsOfFile: tests + "/" + file, encoding: .utf8)
            for attribute in Self.suiteAttributes(in: text) where !attribute.contains(".ownThreads") {
                without.append("\(file): \(attribute.prefix(80))")
            }
        }
        #expect(files.count > 20, "found no test files under \(tests)")
        #expect(without.isEmpty, "suites without .ownThreads: \(without)")
        let split = "@Suite(\n    \"a suite\",\n    .ownThreads)\nstruct A {}\n@Suite(\"b\")\nstruct B {}"
        #expect(
            Self.suiteAttributes(in: split).map { $0.contains(".ownThreads") } == [true, false], "the reader itself")
    }

    /// Each `@Suite(…)` attribute in `text`, whole however the formatter wrapped it (to its
    /// closing parenthesis, those inside string literals not counted).
    static func suiteAttributes(in text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let start = rest.range(of: "@Suite(") {
            var depth = 1
            var inString = false
            var end = rest.endIndex
            var index = start.upperBound
            while index < rest.endIndex {
                let character = rest[index]
                if inString && character == "\\" {
                    index = rest.index(after: index) // an escaped character, a quote included
                } else if character == "\"" {
                    inString.toggle()
                }
                if !inString && character == "(" { depth += 1 }
                if !inString && character == ")" {
                    depth -= 1
                    if depth == 0 {
                        end = rest.index(after: index)
                        break
                    }
                }
                index = rest.index(after: index)
            }
            found.append(String(rest[start.lowerBound..<end]))
            rest = rest[end...]
        }
        return found
    }

    @Test(
        "a child given an environment of its own still gets this process's sanitizer settings (scripts/sanitize.sh): a sanitizer-built octunnel writes its reports where the script looks, not on a stderr a test reads"
    )
    func sanitizerSettingsReachChildren() throws {
        let parent = ["TSAN_OPTIONS": "log_path=/r/tsan", "SWIFT_BACKTRACE": "enable=no", "HOME": "/root"]
        let merged = addingSanitizerSettings(to: ["PATH": "/usr/bin:/bin", "HOME": "/t"], from: parent)
        #expect(
            merged == [
                "PATH": "/usr/bin:/bin", "HOME": "/t", "TSAN_OPTIONS": "log_path=/r/tsan",
                "SWIFT_BACKTRACE": "enable=no",
            ])
        #expect(addingSanitizerSettings(to: ["TSAN_OPTIONS": "mine"], from: parent)["TSAN_OPTIONS"] == "mine")
        // Both ways the harness starts a child, with the minimal environment tests give octunnel.
        let ours = ProcessInfo.processInfo.environment.filter { sanitizerVariables.contains($0.key) }
        let spawned = try run("/usr/bin/env", [], environment: ["PATH": "/usr/bin:/bin"])
        let ran = try run("/usr/bin/env", [], environment: ["PATH": "/usr/bin:/bin"])
        for (name, value) in ours {
            #expect(
                spawned.stdout.split(separator: "\n").contains("\(name)=\(value)"[...]),
                "posix_spawn child lacks \(name): \(spawned.stdout)")
            #expect(
                ran.stdout.split(separator: "\n").contains("\(name)=\(value)"[...]),
                "Process child lacks \(name): \(ran.stdout)")
        }
    }

    @Test(
        "octunnel is seen to carry AddressSanitizer exactly when this test bundle, built with it, does: a peak-RSS bound is then ASan's 3x"
    )
    func addressSanitizerSeenInTheBinary() throws {
        let runnerHasASan = carriesAddressSanitizer(try #require(Bundle.main.executablePath))
        #expect(
            octunnelHasAddressSanitizer == runnerHasASan,
            "\(octunnelBinary): \(octunnelHasAddressSanitizer), the test runner: \(runnerHasASan)")
        #expect(peakMemoryAllowance == (runnerHasASan ? 3 : 1))
    }
}

/// A value one thread sets and another reads.
private final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ new: Value) { lock.withLock { value = new } }
}
