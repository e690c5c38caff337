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
    }

    /// Runs `path arguments` with stdin on /dev/null and `environment`; waits for it to exit.
    static func run(_ path: String, _ arguments: [String], environment: [String: String]) throws(SystemError) -> Result {
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
        let (rc, pid) = actions.spawn(path, arguments: argv, environment: envp, searchPath: false)
        close(out[1])
        close(err[1])
        guard rc == 0 else {
            close(out[0]); close(err[0])
            throw SystemError("posix_spawn", code: rc, detail: path)
        }
        let (stdout, stderr) = drain(out[0], err[0])
        close(out[0]); close(err[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: exit, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Reads both pipes until both end, so neither can fill up and stall the child.
    private static func drain(_ first: Int32, _ second: Int32) -> ([UInt8], [UInt8]) {
        var fds = [pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)]
        var collected: [[UInt8]] = [[], []]
        var open = 2
        var buffer = [UInt8](repeating: 0, count: 4096)
        while open > 0 {
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let count = read(fds[index].fd, &buffer, buffer.count)
                if count > 0 {
                    collected[index] += buffer[..<count]
                } else if count == 0 || errno != EINTR {
                    fds[index].fd = -1
                    open -= 1
                }
            }
        }
        return (collected[0], collected[1])
    }
}
