import Foundation

/// A test client's connection to 127.0.0.1 whose writer and reader threads never outlive its socket.
///
/// A writer that is still sending when its reader closes the descriptor sends its next chunk
/// to whatever the process opened under the same number since: in a test process that runs
/// suites side by side, another test's connection, which then sees bytes it never sent (issue
/// 29). A reader thread left running takes that connection's bytes instead: a 64 KiB read on a
/// number reused by a byte-checking server's socket is a stream whose first 64 KiB never arrive
/// (seen in CI: the event-stream reader of the re-key test, closed by its caller while it still
/// read, beside the 200-connection test). `finish()` therefore shuts the socket first (a
/// blocked send or read returns), waits for both threads to return, and only then closes the
/// descriptor, once.
public final class ClientConnection: @unchecked Sendable {
    /// The descriptor, valid until `finish()`.
    public let fd: Int32
    private let lock = NSLock()
    private var writer = ThreadSlot()
    private var reader = ThreadSlot()
    private var finished = false
    private var sentSoFar = 0

    /// Connects to 127.0.0.1:`port` with `timeout` seconds on each read and send; nil if that failed.
    public init?(port: Int, timeout: Int) {
        let fd = connectLoopback(port)
        guard fd >= 0 else { return nil }
        self.fd = fd
        setSocketTimeout(fd, seconds: timeout)
    }

    /// Sends `bytes` from a thread of its own, in chunks of at most `chunk`, then half-closes
    /// (unless `halfClose` is false). Once per connection.
    public func startWriting(_ bytes: [UInt8], chunk: Int = 65536, halfClose: Bool = true) {
        let fd = self.fd
        startThread(\.writer, "one writer per connection, before finish()") { [self] in
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes {
                    send(fd, $0.baseAddress! + offset, min(chunk, bytes.count - offset), Int32(MSG_NOSIGNAL))
                }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
                lock.lock(); sentSoFar = offset; lock.unlock()
            }
            if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        }
    }

    /// Reads from a thread of its own, handing each chunk to `body` until EOF, an error, or
    /// `body` returns false. Once per connection; `finish()` waits for it.
    public func startReading(_ body: @escaping @Sendable ([UInt8]) -> Bool) {
        let fd = self.fd
        startThread(\.reader, "one reader thread per connection, before finish()") {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 || !body(Array(buffer[..<count])) { return }
            }
        }
    }

    /// One of the connection's two threads: what it signals when it returns, and whether it runs.
    private struct ThreadSlot {
        var done: DispatchSemaphore?
        var running = false
    }

    /// Runs `work` on a thread of its own in `slot`, which must be free and the connection not
    /// finished (`rule` says so otherwise); `finish()` waits for it.
    private func startThread(
        _ slot: ReferenceWritableKeyPath<ClientConnection, ThreadSlot> & Sendable, _ rule: String,
        _ work: @escaping @Sendable () -> Void
    ) {
        let done = DispatchSemaphore(value: 0)
        lock.lock()
        precondition(self[keyPath: slot].done == nil && !finished, "\(rule)")
        self[keyPath: slot] = ThreadSlot(done: done, running: true)
        lock.unlock()
        let thread = Thread { [self] in
            defer {
                lock.lock(); self[keyPath: slot].running = false; lock.unlock()
                done.signal()
            }
            work()
        }
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// Whether the reader thread has returned (or none was started).
    public var readerHasReturned: Bool { lock.lock(); defer { lock.unlock() }; return !reader.running }

    /// Whether the writer thread has returned (or none was started).
    public var writerHasReturned: Bool { lock.lock(); defer { lock.unlock() }; return !writer.running }

    /// Bytes the writer has handed to the socket so far.
    public var sent: Int { lock.lock(); defer { lock.unlock() }; return sentSoFar }

    /// Reads until EOF, an error or `limit` bytes.
    public func readToEnd(limit: Int = .max) -> [UInt8] { readAll(fd, limit: limit) }

    /// Shuts the socket, waits for the writer and the reader (if any) to return, closes the
    /// descriptor. Once; later calls do nothing.
    public func finish() {
        lock.lock()
        if finished { lock.unlock(); return }
        finished = true
        let threads = [writer.done, reader.done].compactMap { $0 }
        lock.unlock()
        if !threads.isEmpty {
            shutdown(fd, Int32(SHUT_RDWR))
            threads.forEach { $0.wait() }
        }
        close(fd)
    }

    deinit { finish() }
}

/// Sends `payload` on a new connection to `port` while reading the answer to its end, the
/// writer joined before the socket closes; nil when the connection could not be made.
public func sendAndReceive(port: Int, payload: [UInt8], timeout: Int, limit: Int = .max) -> [UInt8]? {
    guard let connection = ClientConnection(port: port, timeout: timeout) else { return nil }
    defer { connection.finish() }
    connection.startWriting(payload)
    return connection.readToEnd(limit: limit)
}

/// A thread-safe count.
public final class ByteCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    public init() {}
    public func set(_ value: Int) { lock.lock(); count = value; lock.unlock() }
    public func add(_ value: Int) { lock.lock(); count += value; lock.unlock() }
    public var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
