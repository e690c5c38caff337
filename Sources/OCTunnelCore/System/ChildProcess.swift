import OCTunnelLibc
import Foundation

/// The one spawner: every program octunnel starts (`ssh -G`, the askpass program, the user's
/// `--notify-command`, `notify-send`, service managers) starts here, with its descriptors,
/// environment and signals set in one place: stdin on /dev/null (or an unlinked file that already
/// holds the whole input, `input`), stdout (and stderr, unless it is left to the terminal) on
/// close-on-exec pipes that are drained together so neither fills up, no shell, the child reaped,
/// and killed (SIGKILL) past its time limit.
///
/// posix_spawn with pipes, not Foundation's `Process`: ssh closes every inherited descriptor at
/// start, which Foundation on Linux takes for an exit.
enum ChildProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// It ran past the time limit and was killed (`status` is then 128 + SIGKILL).
        var timedOut = false
    }

    /// Runs `path arguments` with stdin on /dev/null and `environment` (nil: this process's);
    /// waits for it to exit, or with `timeout`, at most that many seconds before it is killed
    /// (SIGKILL). `searchPath` looks a bare name up in `PATH` (posix_spawnp). With `groups`, the
    /// child leads a process group of its own, noted there while it runs: the time limit kills
    /// the whole group (what the child started too), and `groups.endAll()` ends it at once.
    /// With `input`, stdin is a file holding those bytes (at most `inputLimit`), written whole
    /// before the child starts and unlinked: no write can block on the child or meet a closed
    /// pipe (no SIGPIPE, nothing to interleave with the draining), whatever the input's size.
    /// Each of stdout and stderr keeps its first `outputLimit` bytes (the rest is drained, dropped).
    static func run(
        _ path: String, _ arguments: [String], environment: [String: String]?, timeout: Double? = nil,
        searchPath: Bool = false, groups: ChildGroups? = nil, input: [UInt8]? = nil,
        outputLimit: Int = 65536
    ) throws(SystemError) -> Result {
        var stdout: [UInt8] = [], stderr: [UInt8] = []
        let (status, timedOut) = try spawnAndWait(
            path, arguments, environment: environment, timeout: timeout, searchPath: searchPath,
            captureStderr: true, groups: groups, input: input
        ) { pipe, bytes in
            if pipe == 0 {
                if stdout.count < outputLimit { stdout += bytes }
            } else if stderr.count < 65536 {
                stderr += bytes
            }
        }
        return Result(
            status: status, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self),
            timedOut: timedOut)
    }

    /// Runs a program whose standard output is a secret (an askpass program's answer): it goes
    /// straight into `into` (at most its size), never into a String; stderr stays the
    /// terminal's. The exit status and how many bytes came.
    static func runForSecret(
        _ path: String, _ arguments: [String], into secret: some SecretStorage,
        searchPath: Bool
    ) throws(SystemError) -> (status: Int32, length: Int) {
        let filled = SecretFill(secret)
        let (status, _) = try spawnAndWait(
            path, arguments, environment: nil, timeout: nil, searchPath: searchPath,
            captureStderr: false
        ) { _, bytes in filled.append(bytes) }
        return (status, filled.length)
    }

    /// The most `input` may hold: a program for the VPS and a key line or two.
    static let inputLimit = 1 << 20

    /// Spawns, hands every chunk read from stdout (0) and stderr (1) to `collect`, reaps. The exit
    /// status (128 + the signal for a killed child) and whether the time limit killed it.
    private static func spawnAndWait(
        _ path: String, _ arguments: [String], environment: [String: String]?, timeout: Double?,
        searchPath: Bool, captureStderr: Bool, groups: ChildGroups? = nil, input: [UInt8]? = nil,
        collect: (Int, ArraySlice<UInt8>) -> Void
    ) throws(SystemError) -> (Int32, Bool) {
        let stdin = try input.map { bytes throws(SystemError) in try inputFile(bytes, for: path) }
        defer { stdin?.close() }
        let out = try Syscall.pipe()
        let err = captureStderr ? try Syscall.pipe() : nil
        let actions = SpawnActions()
        if let stdin { actions.duplicate(stdin.number, as: 0) } else { actions.open(0, "/dev/null", O_RDONLY) }
        actions.duplicate(out.write.number, as: 1)
        if let err { actions.duplicate(err.write.number, as: 2) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { argv.forEach { free($0) }; envp?.forEach { free($0) } }
        let (rc, pid) = actions.spawn(
            path, arguments: argv, environment: envp, searchPath: searchPath, ownGroup: groups != nil)
        stdin?.close()
        out.write.close()
        err?.write.close()
        guard rc == 0 else { throw SystemError("posix_spawn", code: rc, detail: path) }
        // Killed: the whole group when it leads one.
        let end = { if groups != nil { ChildGroups.killGroup(pid) } else { kill(pid, SIGKILL) } }
        if let groups {
            if !groups.add(pid) { end() }
        }
        defer { groups?.remove(pid) }
        let deadline = timeout.map { MonotonicClock.now() + $0 }
        let inTime = drain(
            [out.read.number] + (err.map { [$0.read.number] } ?? []), deadline: deadline, collect: collect)
        out.read.close()
        err?.read.close()
        var timedOut = !inTime
        if timedOut {
            end()
        } else if let deadline {
            // The pipes ended (closed, or handed on), the process may still run: wait out the rest.
            while true {
                let waited = wait(pid, blocking: false)
                if case .exited(let status) = waited { return (status, false) }
                guard case .running = waited else { return (128 + SIGKILL, false) }
                guard MonotonicClock.now() < deadline else { end(); timedOut = true; break }
                usleep(10_000)
            }
        }
        guard case .exited(let status) = wait(pid, blocking: true) else { return (128 + SIGKILL, timedOut) }
        return (status, timedOut)
    }

    /// A file that holds `bytes`, read from its start: created close-on-exec in the temp
    /// directory (0600, a random name, `O_EXCL`), unlinked at once (nobody else can open it, and nothing is left
    /// behind), written whole, rewound. More than `inputLimit` is an error (E2BIG).
    private static func inputFile(_ bytes: [UInt8], for path: String) throws(SystemError) -> OwnedDescriptor {
        guard bytes.count <= inputLimit else {
            throw SystemError("write", code: E2BIG, detail: "\(path)'s standard input")
        }
        var name = ""
        var fd: Int32 = -1
        for _ in 0..<16 {
            // Swift's system generator, as AtomicFile names its temp files: 48 bits, 12 hex digits.
            let suffix = String(String(UInt64.random(in: 0..<(1 << 48)) | (1 << 48), radix: 16).dropFirst())
            name = (NSTemporaryDirectory() as NSString).appendingPathComponent("octunnel-stdin-" + suffix)
            fd = Syscall.open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o600)
            if fd >= 0 || Errno.current != .fileExists { break }
        }
        guard fd >= 0 else { throw SystemError.last("open", detail: name) }
        let file = OwnedDescriptor(fd)
        unlink(name)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Syscall.write(fd, $0.baseAddress! + written, $0.count - written) }
            guard count > 0 else {
                let error = SystemError.last("write", detail: "\(path)'s standard input")
                file.close()
                throw error
            }
            written += count
        }
        guard lseek(fd, 0, SEEK_SET) == 0 else {
            let error = SystemError.last("lseek", detail: "\(path)'s standard input")
            file.close()
            throw error
        }
        return file
    }

    private enum Waited {
        /// Its exit status (128 + the signal for a killed child).
        case exited(Int32)
        case running
        /// It cannot be waited for (reaped already).
        case gone
    }

    /// `waitpid`, EINTR retried.
    private static func wait(_ pid: pid_t, blocking: Bool) -> Waited {
        var status: Int32 = 0
        while true {
            let rc = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if rc == pid { return .exited((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)) }
            if rc == 0 { return .running }
            if Errno.current != .interrupted { return .gone }
        }
    }

    /// Reads the pipes until all end (or `deadline` passes: false), so none can fill up and stall
    /// the child.
    private static func drain(_ pipes: [Int32], deadline: Double?, collect: (Int, ArraySlice<UInt8>) -> Void) -> Bool {
        var fds = pipes.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var open = fds.count
        var buffer = [UInt8](repeating: 0, count: 4096)
        defer { buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        while open > 0 {
            var wait: Int32 = -1
            if let deadline {
                let left = deadline - MonotonicClock.now()
                guard left > 0 else { return false }
                wait = Int32(left * 1000) + 1
            }
            do {
                _ = try Syscall.poll(&fds, timeout: wait)
            } catch {
                if error == .interrupted { continue }
                break
            }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let count = Syscall.read(fds[index].fd, &buffer, buffer.count) // EINTR retried there
                if count > 0 {
                    collect(index, buffer[..<count])
                } else {
                    fds[index].fd = -1
                    open -= 1
                }
            }
        }
        return true
    }
}

/// Fills a secret's storage from its start, dropping what does not fit.
private final class SecretFill<Storage: SecretStorage> {
    let secret: Storage
    private(set) var length = 0

    init(_ secret: Storage) { self.secret = secret }

    func append(_ bytes: ArraySlice<UInt8>) {
        for byte in bytes where length < secret.count {
            secret[length] = byte
            length += 1
        }
    }
}
