import Foundation

/// A real OpenSSH `ssh-agent` in the foreground (`-D`) on a socket in its own temp dir.
/// Stopped on `stop()` or deinit; `start()` brings it back on the same socket, empty.
public final class SSHAgentProcess: @unchecked Sendable {
    public let directory: TempDirectory
    public let socketPath: String
    private var pid: pid_t = 0

    public init() throws {
        directory = try TempDirectory("octunnel-agent")
        socketPath = directory.file("agent.sock")
        try start()
    }

    /// Starts the agent and waits until its socket accepts: the socket file alone is not enough
    /// (ssh-agent binds before it listens, and an `ssh-add` in between was refused under load).
    public func start() throws {
        try? FileManager.default.removeItem(atPath: socketPath)
        pid = try spawn("/usr/bin/ssh-agent", ["-D", "-a", socketPath])
        let ready = waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: socketPath) && answers() }
        guard ready else {
            stop()
            throw NSError(
                domain: "SSHAgentProcess", code: 1,
                userInfo: [NSLocalizedDescriptionKey: "ssh-agent did not answer on \(socketPath)"])
        }
    }

    /// Whether the agent answers `ssh-add -l` (1: no identities; 2: no agent to talk to).
    private func answers() -> Bool {
        let listed = try? run(
            "/usr/bin/ssh-add", ["-l"], environment: ["PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": socketPath])
        return listed.map { $0.status == 0 || $0.status == 1 } ?? false
    }

    /// `SSH_AUTH_SOCK` for a child that should use this agent.
    public var environment: [String: String] { ["SSH_AUTH_SOCK": socketPath] }

    /// `ssh-add FILE` into this agent.
    public func add(_ keyFile: String) throws {
        let result = try run(
            "/usr/bin/ssh-add", ["-q", keyFile], environment: ["PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": socketPath])
        guard result.status == 0 else {
            throw NSError(
                domain: "SSHAgentProcess", code: 2,
                userInfo: [NSLocalizedDescriptionKey: "ssh-add \(keyFile): \(result.stderr)"])
        }
    }

    /// Stops the agent (SIGTERM, then waits for it).
    public func stop() {
        guard pid != 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        pid = 0
    }

    deinit { stop() }
}
