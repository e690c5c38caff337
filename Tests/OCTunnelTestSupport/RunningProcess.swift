import Foundation

/// A long-running child (e.g. `octunnel tunnel up`) whose stdout and stderr lines are collected
/// as they come, so a test can wait for a line instead of sleeping. Killed on deinit.
public final class RunningProcess: @unchecked Sendable {
    public let pid: pid_t
    private var exitStatus: Int32?
    private let statusLock = NSLock()
    /// What the child printed. The reader threads hold only this, never the process object,
    /// so dropping the last reference to a `RunningProcess` runs its deinit (which kills the
    /// child) even while the child still runs and its pipes are open.
    private let output = OutputLines()

    public init(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil
    ) throws {
        // Every end close-on-exec from the start (CloseOnExec.swift): the child gets its ends as
        // 0, 1 and 2 (posix_spawn's dup2 clears the flag there), and a child that another test
        // spawns meanwhile never inherits a copy that holds the pipe open.
        guard let out = closeOnExecPipe() else { throw POSIXError(.EMFILE) }
        guard let err = closeOnExecPipe() else { close(out[0]); close(out[1]); throw POSIXError(.EMFILE) }
        guard let input = closeOnExecPipe() else { (out + err).forEach { close($0) }; throw POSIXError(.EMFILE) }
        defer { close(out[1]); close(err[1]); close(input[0]) }
        do {
            pid = try spawn(
                path, arguments, stdin: stdin == nil ? -1 : input[0], stdout: out[1], stderr: err[1],
                environment: environment)
        } catch {
            close(out[0]); close(err[0]); close(input[1])
            throw error
        }
        let writer = input[1]
        if let stdin {
            let bytes = Array(stdin.utf8)
            Thread {
                var offset = 0
                while offset < bytes.count {
                    let n = bytes.withUnsafeBytes { write(writer, $0.baseAddress! + offset, bytes.count - offset) }
                    if n <= 0 { break }
                    offset += n
                }
                close(writer)
            }.start()
        } else {
            close(writer)
        }
        output.collect(out[0], isStdout: true)
        output.collect(err[0], isStdout: false)
    }

    /// Whether the child still runs (reaping it once it has exited).
    public var isRunning: Bool {
        statusLock.lock()
        defer { statusLock.unlock() }
        if exitStatus != nil { return false }
        sampleHighWater()
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        if rc == pid {
            exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            return false
        }
        return rc == 0
    }

    /// Reads the child's VmHWM (/proc/PID/status): the peak of its own address space since its
    /// exec. Not wait4's `ru_maxrss`: posix_spawn execs from a vfork of this process, and the
    /// kernel then counts this process's peak (hundreds of MB in a full test run) as the child's.
    private func sampleHighWater() {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return }
        peakKilobytes = max(peakKilobytes ?? 0, kilobytes)
    }

    /// The child's peak resident memory in KiB: the largest VmHWM seen while it ran, sampled each
    /// time `isRunning` is asked (every 20 ms while `waitForExit` waits), so memory that
    /// grows for the whole run is seen; a peak in the last 20 ms before exit may be missed.
    public var peakResidentKilobytes: Int? {
        statusLock.lock()
        defer { statusLock.unlock() }
        return peakKilobytes
    }
    private var peakKilobytes: Int?

    public var stdout: [String] { output.stdout }
    public var stderr: [String] { output.stderr }
    /// When stdout line `index` arrived: timings measured from it do not include how late a
    /// test got to look (an async test may wait for a thread of the test pool).
    public func stdoutArrival(_ index: Int) -> Date { output.stdoutArrival(index) }
    public var stderrText: String { stderr.joined(separator: "\n") }

    /// Waits for a line (stderr, or stdout with `stdout: true`) containing `text`; returns it.
    public func waitForLine(
        containing text: String, stdout: Bool = false, after index: Int = 0, timeout: Double = 20
    ) -> String? {
        output.waitForLine(containing: text, stdout: stdout, after: index, timeout: timeout)
    }

    /// Waits for the process to exit, up to `timeout`; returns its status or nil.
    public func waitForExit(timeout: Double) -> Int32? {
        let exited = waitUntil(timeout: timeout) { !isRunning }
        guard exited else { return nil }
        output.waitForEnd(timeout: 2)
        statusLock.lock()
        defer { statusLock.unlock() }
        return exitStatus
    }

    public func signal(_ signal: Int32) { kill(pid, signal) }

    /// SIGINT, then SIGKILL if it has not exited within 5 s.
    public func stopGracefullyOrKill() {
        guard isRunning else { return }
        signal(SIGINT)
        if waitForExit(timeout: 5) == nil {
            signal(SIGKILL)
            _ = waitForExit(timeout: 5)
        }
    }

    /// CPU seconds used so far (user + system), from /proc.
    public var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }
}

/// The lines a child prints on stdout and stderr, collected by one reader thread per pipe.
private final class OutputLines: @unchecked Sendable {
    private let lock = NSCondition()
    private var stdoutLines: [String] = []
    /// When each stdout line arrived (read by the collector thread, not when a test looked).
    private var stdoutArrivals: [Date] = []
    private var stderrLines: [String] = []
    private var openStreams = 2

    func collect(_ fd: Int32, isStdout: Bool) {
        let thread = Thread { [self] in
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: buffer[..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lock.lock()
                    if isStdout {
                        stdoutLines.append(line); stdoutArrivals.append(Date())
                    } else {
                        stderrLines.append(line)
                    }
                    lock.broadcast()
                    lock.unlock()
                }
            }
            close(fd)
            lock.lock()
            if !pending.isEmpty {
                let line = String(decoding: pending, as: UTF8.self)
                if isStdout {
                    stdoutLines.append(line); stdoutArrivals.append(Date())
                } else {
                    stderrLines.append(line)
                }
            }
            openStreams -= 1
            lock.broadcast()
            lock.unlock()
        }
        thread.start()
    }

    var stdout: [String] { lock.lock(); defer { lock.unlock() }; return stdoutLines }
    var stderr: [String] { lock.lock(); defer { lock.unlock() }; return stderrLines }
    func stdoutArrival(_ index: Int) -> Date { lock.lock(); defer { lock.unlock() }; return stdoutArrivals[index] }

    func waitForLine(
        containing text: String, stdout: Bool = false, after index: Int = 0, timeout: Double = 20
    ) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            let lines = stdout ? stdoutLines : stderrLines
            if let line = lines.dropFirst(index).first(where: { $0.contains(text) }) { return line }
            if openStreams == 0 || !lock.wait(until: deadline) { return nil }
        }
    }

    /// Waits up to `timeout` for both pipes to reach EOF (the last lines are then in).
    func waitForEnd(timeout: Double) {
        lock.lock()
        defer { lock.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while openStreams > 0 && lock.wait(until: deadline) {}
    }
}
