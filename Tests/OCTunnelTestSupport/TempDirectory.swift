import Foundation

/// A fresh directory under /tmp, removed with everything in it on deinit.
public final class TempDirectory: @unchecked Sendable {
    public let path: String

    public init(_ prefix: String = "octunnel-test") throws {
        let template = NSTemporaryDirectory() + "/\(prefix)-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let result = mkdtemp(&bytes) else { throw POSIXError(.EIO) }
        path = String(cString: result)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to the file `name` here, close-on-exec (`writeBytes`).
    public func write(_ name: String, _ text: String, mode: Int = 0o644) throws {
        try writeBytes(Array(text.utf8), to: file(name), mode: mode_t(mode))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A TCP port on 127.0.0.1 that was free a moment ago, and that no other test of this process
/// was given. It is picked below the kernel's ephemeral range (`ip_local_port_range`): a port
/// from that range (bind to 0) could be taken by any outgoing connection, a test's or a tunnel's,
/// between this call and the bind it is for, which made a listener fail with EADDRINUSE under
/// a busy suite (a relay's bind in OpenOrderTests, CI 23:05).
public func freePort() -> Int {
    let ephemeralLow =
        (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
        .flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } }
        ?? 32768
    let range = max(1024, ephemeralLow - 12000)...(ephemeralLow - 1)
    for _ in 0..<500 {
        let port = Int.random(in: range)
        guard PortsHandedOut.shared.take(port), canBind(port) else { continue }
        return port
    }
    return ephemeralPort()
}

/// Whether 127.0.0.1:`port` can be bound now (no SO_REUSEADDR: a port in TIME_WAIT is not free).
private func canBind(_ port: Int) -> Bool {
    let fd = closeOnExecStreamSocket()
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// A port the kernel picks (bind to 0, read, close): the fallback when no port below the range was free.
private func ephemeralPort() -> Int {
    let fd = closeOnExecStreamSocket()
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The ports `freePort` gave out in this process: never the same twice, so two tests that
/// ask at once cannot both be given one port.
private final class PortsHandedOut: @unchecked Sendable {
    static let shared = PortsHandedOut()
    private let lock = NSLock()
    private var ports = Set<Int>()

    func take(_ port: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return ports.insert(port).inserted
    }
}

/// Connects a blocking TCP socket to 127.0.0.1:port, or returns -1.
public func connectLoopback(_ port: Int) -> Int32 {
    let fd = closeOnExecStreamSocket()
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    if rc != 0 { close(fd); return -1 }
    return fd
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes.
@discardableResult
public func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// `waitUntil` for async tests: sleeps with `Task.sleep`, so a long wait gives its thread of
/// the test pool back to the other tests.
public func waitUntilAsync(timeout: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return condition()
}

/// The package root, found from this file's path.
public let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.path + "/Package.swift") { return url.path }
    }
    return FileManager.default.currentDirectoryPath
}()

/// The `octunnel` the end-to-end tests run: `OCTUNNEL_BINARY` when set (scripts/test.sh's
/// Debian 13 leg names a wrapper that runs the one built in that root, on libssh2 1.11.1),
/// else the built binary beside the test bundle.
public let octunnelBinary: String = {
    if let chosen = ProcessInfo.processInfo.environment["OCTUNNEL_BINARY"], !chosen.isEmpty { return chosen }
    let candidates =
        [Bundle.main.bundlePath, Bundle.main.bundleURL.deletingLastPathComponent().path]
        .map { $0 + "/octunnel" } + [packageRoot + "/.build/debug/octunnel"]
    for path in candidates where FileManager.default.isExecutableFile(atPath: path) { return path }
    // swift test puts test bundles and products in one folder: walk up from the test binary.
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        if FileManager.default.isExecutableFile(atPath: url.path + "/octunnel") { return url.path + "/octunnel" }
        url.deleteLastPathComponent()
    }
    return packageRoot + "/.build/debug/octunnel"
}()
