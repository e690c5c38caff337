import Foundation

/// Runs a short-lived helper program (such as `ssh -G`) and collects what it printed.
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

    /// Runs `path arguments` with stdin on /dev/null and `environment`; waits for it to exit,
    /// or with `timeout`, at most that many seconds before it is killed (SIGKILL). `searchPath`
    /// looks a bare name up in `PATH` (posix_spawnp); no shell is ever involved.
    static func run(_ path: String, _ arguments: [String], environment: [String: String], timeout: Double? = nil,
                    searchPath: Bool = false) throws(SystemError) -> Result {
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        try retryingEINTR("pipe") { pipe(&out) }
        do { try retryingEINTR("pipe") { pipe(&err) } } catch { close(out[0]); close(out[1]); throw error }
        let actions = SpawnActions()
        actions.open(0, "/dev/null", O_RDONLY)
        actions.duplicate(out[1], as: 1)
        actions.duplicate(err[1], as: 2)
        actions.close(out[0])
        actions.close(err[0])
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        let (rc, pid) = actions.spawn(path, arguments: argv, environment: envp, searchPath: searchPath)
        close(out[1])
        close(err[1])
        guard rc == 0 else {
            close(out[0]); close(err[0])
            throw SystemError("posix_spawn", code: rc, detail: path)
        }
        let deadline = timeout.map { MonotonicClock.now() + $0 }
        let (stdout, stderr, inTime) = drain(out[0], err[0], deadline: deadline)
        close(out[0]); close(err[0])
        var status: Int32 = 0
        var timedOut = !inTime
        if timedOut {
            kill(pid, SIGKILL)
        } else if let deadline {
            // The pipes ended (closed, or handed on), the process may still run: wait out the rest.
            while waitpid(pid, &status, WNOHANG) == 0 {
                guard MonotonicClock.now() < deadline else { kill(pid, SIGKILL); timedOut = true; break }
                usleep(10_000)
            }
            if !timedOut {
                let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                return Result(status: exit, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
            }
        }
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: exit, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self),
                      timedOut: timedOut)
    }

    /// Reads both pipes until both end (or `deadline` passes: false), so neither can fill up and
    /// stall the child. At most 64 KiB of each is kept.
    private static func drain(_ first: Int32, _ second: Int32, deadline: Double?) -> ([UInt8], [UInt8], Bool) {
        var fds = [pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)]
        var collected: [[UInt8]] = [[], []]
        var open = 2
        var buffer = [UInt8](repeating: 0, count: 4096)
        while open > 0 {
            var wait: Int32 = -1
            if let deadline {
                let left = deadline - MonotonicClock.now()
                guard left > 0 else { return (collected[0], collected[1], false) }
                wait = Int32(left * 1000) + 1
            }
            if poll(&fds, nfds_t(fds.count), wait) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let count = read(fds[index].fd, &buffer, buffer.count)
                if count > 0 {
                    if collected[index].count < 65536 { collected[index] += buffer[..<count] }
                } else if count == 0 || errno != EINTR {
                    fds[index].fd = -1
                    open -= 1
                }
            }
        }
        return (collected[0], collected[1], true)
    }
}
