import Foundation

/// A long-running child (e.g. `octunnel tunnel up`) whose stdout and stderr lines are collected
/// as they come, so a test can wait for a line instead of sleeping. Killed on deinit.
public final class RunningProcess: @unchecked Sendable {
    public let process = Process()
    private let lock = NSCondition()
    private var stdoutLines: [String] = []
    private var stderrLines: [String] = []
    private var openStreams = 2

    public init(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        collect(out.fileHandleForReading, isStdout: true)
        collect(err.fileHandleForReading, isStdout: false)
    }

    private func collect(_ handle: FileHandle, isStdout: Bool) {
        let thread = Thread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lock.lock()
                    if isStdout { stdoutLines.append(line) } else { stderrLines.append(line) }
                    lock.broadcast()
                    lock.unlock()
                }
            }
            lock.lock()
            if !pending.isEmpty {
                let line = String(decoding: pending, as: UTF8.self)
                if isStdout { stdoutLines.append(line) } else { stderrLines.append(line) }
            }
            openStreams -= 1
            lock.broadcast()
            lock.unlock()
        }
        thread.start()
    }

    public var stdout: [String] { lock.lock(); defer { lock.unlock() }; return stdoutLines }
    public var stderr: [String] { lock.lock(); defer { lock.unlock() }; return stderrLines }
    public var stderrText: String { stderr.joined(separator: "\n") }

    /// Waits for a line (stderr, or stdout with `stdout: true`) containing `text`; returns it.
    public func waitForLine(containing text: String, stdout: Bool = false, after index: Int = 0, timeout: Double = 20) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            let lines = stdout ? stdoutLines : stderrLines
            if let line = lines.dropFirst(index).first(where: { $0.contains(text) }) { return line }
            if openStreams == 0 || !lock.wait(until: deadline) { return nil }
        }
    }

    /// Waits for the process to exit, up to `timeout`; returns its status or nil.
    public func waitForExit(timeout: Double) -> Int32? {
        let exited = waitUntil(timeout: timeout) { !process.isRunning }
        guard exited else { return nil }
        process.waitUntilExit()
        lock.lock()
        while openStreams > 0 { _ = lock.wait(until: Date().addingTimeInterval(2)); break }
        lock.unlock()
        return process.terminationStatus
    }

    public func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// CPU seconds used so far (user + system), from /proc.
    public var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
