import Foundation

/// scripts/hostile-http.py on a free loopback port: something that is not OpenCode behind the
/// VPS port, answering every request with one bad answer (`mode`, see the script).
public final class HostileHTTPServer: @unchecked Sendable {
    public let port: Int
    private let running: RunningProcess

    public init(mode: String, arguments: [String] = []) throws {
        running = try RunningProcess(python3, [packageRoot + "/scripts/hostile-http.py", "--mode", mode] + arguments)
        guard let line = running.waitForLine(containing: "LISTENING", stdout: true, timeout: 15),
            let port = Int(line.split(separator: " ").last ?? "")
        else {
            throw HarnessError("hostile-http.py did not start: \(running.stderrText)")
        }
        self.port = port
    }

    public func stop() {
        running.signal(SIGKILL)
        _ = running.waitForExit(timeout: 5)
    }

    deinit { stop() }
}
