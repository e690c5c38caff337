import Foundation
import Testing
#if canImport(Glibc)
    import Glibc
#endif

/// What a finished process left behind: its exit status and, separately, stdout and stderr,
/// byte for byte.
public struct ProcessResult: Sendable, CustomStringConvertible {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    public var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// The one way a test runs a program to completion (issue 49: one runner for both test
/// targets): `spawn` (posix_spawn, not Foundation's `Process`, which mistakes ssh's closing of
/// inherited descriptors for an exit), stdin from `stdin` or empty, stdout and stderr captured
/// through close-on-exec files (neither can fill a pipe and stall it), in `directory` when given
/// (through `env -C`: posix_spawn's chdir is not in Swift's Glibc). Waits for the exit; the
/// suite's time limit is the hang guard.
@discardableResult
public func run(
    _ tool: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
    in directory: String? = nil
) throws -> ProcessResult {
    try withTemporaryDirectory { dir in
        let paths = (input: dir + "/stdin", out: dir + "/stdout", err: dir + "/stderr")
        try writeBytes(Array((stdin ?? "").utf8), to: paths.input)
        try writeBytes([], to: paths.out)
        try writeBytes([], to: paths.err)
        let input = open(paths.input, O_RDONLY | O_CLOEXEC), out = open(paths.out, O_WRONLY | O_CLOEXEC),
            err = open(paths.err, O_WRONLY | O_CLOEXEC)
        defer { [input, out, err].filter { $0 >= 0 }.forEach { close($0) } }
        guard input >= 0, out >= 0, err >= 0 else {
            throw HarnessError("open \(dir): \(String(cString: strerror(errno)))")
        }
        let (path, words) = directory.map { ("/usr/bin/env", ["-C", $0, tool] + arguments) } ?? (tool, arguments)
        let pid = try spawn(path, words, stdin: input, stdout: out, stderr: err, environment: environment)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        return ProcessResult(
            status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f),
            stdout: String(decoding: try readBytes(paths.out), as: UTF8.self),
            stderr: String(decoding: try readBytes(paths.err), as: UTF8.self))
    }
}

/// Where the real ssh-keygen is.
public let sshKeygenPath = "/usr/bin/ssh-keygen"

/// Runs the real ssh-keygen (PATH /usr/bin:/bin) and requires it to succeed: the one key helper
/// of both test targets.
@discardableResult
public func sshKeygen(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult
{
    let result = try run(sshKeygenPath, arguments, environment: ["PATH": "/usr/bin:/bin"])
    try #require(result.status == 0, "ssh-keygen \(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    return result
}
