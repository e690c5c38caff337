import Foundation

/// scripts/opencode-standin.py on a free loopback port: the home OpenCode server in tests.
public final class OpenCodeStandIn: @unchecked Sendable {
    public let port: Int
    private let running: RunningProcess

    /// `launcher` is prepended to the command line, e.g. `ip netns exec NS` to run it in a
    /// test's own network namespace (still on that namespace's 127.0.0.1).
    public init(flavor: String = "opencode1", password: String? = nil, heartbeat: Double = 10, launcher: [String] = []) throws {
        var arguments = [packageRoot + "/scripts/opencode-standin.py", "--port", "0", "--flavor", flavor, "--quiet",
                         "--heartbeat", String(heartbeat)]
        if let password { arguments += ["--password", password] }
        let command = launcher + ["/usr/bin/env", "python3"] + arguments
        running = try RunningProcess(command[0], Array(command.dropFirst()))
        guard let line = running.waitForLine(containing: "LISTENING", stdout: true, timeout: 15),
              let port = Int(line.split(separator: " ").last ?? "") else {
            throw NSError(domain: "OpenCodeStandIn", code: 1, userInfo: [NSLocalizedDescriptionKey: "stand-in did not start: \(running.stderrText)"])
        }
        self.port = port
    }

    public func stop() {
        running.signal(SIGKILL)
        _ = running.waitForExit(timeout: 5)
    }

    deinit { stop() }
}
