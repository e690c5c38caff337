import Foundation
import Testing
#if canImport(Glibc)
    import Glibc
#endif

/// A failure of the test harness itself (not of the code under test).
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh private directory, removed afterwards whatever happens.
public func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("octunnel-test-XXXXXX")
    var buffer = Array(template.utf8CString)
    guard let made = mkdtemp(&buffer) else {
        throw HarnessError("mkdtemp \(template): \(String(cString: strerror(errno)))")
    }
    let path = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

public func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

public func readText(_ path: String) throws -> String {
    String(decoding: try readBytes(path), as: UTF8.self)
}

/// Writes `bytes` to `path` (created or truncated) through a close-on-exec descriptor: a child
/// another test spawns meanwhile must not inherit it. A script written here and held open for
/// writing by such a child cannot be run by anyone ("Text file busy": seen in a loaded full run,
/// octunnel's `systemctl` stand-in in ServiceCommandTests, written through Foundation's
/// `Data.write`, whose descriptor is inherited).
public func writeBytes(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { throw HarnessError("write \(path): \(String(cString: strerror(errno)))") }
        offset += written
    }
    try setMode(mode, of: path)
}

public func writeText(_ text: String, to path: String, mode: mode_t = 0o600) throws {
    try writeBytes(Array(text.utf8), to: path, mode: mode)
}

public func setMode(_ mode: mode_t, of path: String) throws {
    guard chmod(path, mode) == 0 else { throw HarnessError("chmod \(path): \(String(cString: strerror(errno)))") }
}

/// The permission bits of `path` (after following symlinks).
public func mode(of path: String) throws -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { throw HarnessError("stat \(path): \(String(cString: strerror(errno)))") }
    return info.st_mode & 0o7777
}

public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// Runs long blocking work (minutes of reads, a 60 s wait) on a thread of its own and awaits
/// it. Swift Testing runs tests on the cooperative pool, one thread per core (2 here): a
/// synchronous test that blocks for minutes keeps every other test waiting for that thread.
/// Return what you want to check and `#expect` it after the await, in the test's own task.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
