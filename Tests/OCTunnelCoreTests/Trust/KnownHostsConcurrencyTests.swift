import Foundation
import OCTunnelTestSupport
import OCTunnelCore
import Testing

/// Errors gathered from several threads.
final class ErrorLog: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String] = []

    func add(_ error: String) { lock.withLock { errors.append(error) } }
    var all: [String] { lock.withLock { errors } }
}

@Suite("Known hosts: concurrent writers", .ownThreads)
struct KnownHostsConcurrencyTests {
    @Test func eightThreadsRecordingAtOnceLoseNoEntry() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/known_hosts"
            let threads = 8, hostsPerThread = 25
            let keys = try (0..<threads).map { _ in try (0..<hostsPerThread).map { _ in try newHostKey() } }
            let errors = ErrorLog()
            let start = DispatchSemaphore(value: 0)
            let done = DispatchGroup()

            for thread in 0..<threads {
                done.enter()
                let mine = keys[thread]
                Thread {
                    defer { done.leave() }
                    start.wait()
                    let store = KnownHostsStore(path: path)
                    for (index, key) in mine.enumerated() {
                        do {
                            try store.record(host: "host-\(thread)-\(index).test", port: 2000 + index, key: key)
                        } catch {
                            errors.add("thread \(thread) host \(index): \(error)")
                        }
                    }
                }.start()
            }
            for _ in 0..<threads { start.signal() }
            done.wait()

            #expect(errors.all.isEmpty, "\(errors.all)")
            let file = try KnownHostsStore(path: path).load()
            #expect(file.malformed.isEmpty)
            #expect(file.entries.count == threads * hostsPerThread)
            let lines = Set(try readText(path).split(separator: "\n").map(String.init))
            let expected = (0..<threads).flatMap { thread in
                keys[thread].enumerated().map {
                    knownHostsLine("[host-\(thread)-\($0.offset).test]:\(2000 + $0.offset)", $0.element)
                }
            }
            let lost = expected.filter { !lines.contains($0) }
            #expect(
                lost.isEmpty, "\(lost.count) of \(expected.count) recorded lines are missing, e.g. \(lost.prefix(3))")
        }
    }
}
