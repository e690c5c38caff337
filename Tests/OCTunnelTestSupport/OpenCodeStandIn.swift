import Foundation

/// scripts/opencode-standin.py on a free loopback port: the home OpenCode server in tests.
public final class OpenCodeStandIn: @unchecked Sendable {
    public let port: Int
    /// The password it asks for: the one given, or the one a 2.x flavour made up and printed.
    public let password: String?
    private let running: RunningProcess

    /// A stand-in of `flavor` behind a fresh password (`pw-` and 8 random characters), and that
    /// password: for a test that must see it never printed.
    public static func withFreshPassword(flavor: String) throws -> (backend: OpenCodeStandIn, password: String) {
        let password = "pw-\(UUID().uuidString.prefix(8))"
        return (try OpenCodeStandIn(flavor: flavor, password: password), password)
    }

    /// `flavor` is one of opencode1, opencode2.0.3, opencode2, other, nosse (see the script).
    /// `launcher` is prepended to the command line, e.g. `ip netns exec NS` to run it in a
    /// test's own network namespace (still on that namespace's 127.0.0.1).
    /// `port` 0 picks a free one; another starts it on that port (e.g. OpenCode started again at home).
    /// `noPassword`: a 2.x flavour serves without a password (OPENCODE_PASSWORD set but empty).
    /// `devBuild`: 2.x's /api/info says version "unknown" and pid 0. `heartbeatFirst`: 2.x sends
    /// `: heartbeat` before server.connected. `webAuth`: 2.x guards its web app too (empty 401).
    /// `hono401`: 1.x refuses with Hono's "Unauthorized" text instead of an empty 401.
    /// `service`: 2.x registers as OpenCode 2's background service of that channel, in the
    /// state and config directories `environment` names (`XDG_STATE_HOME`, `XDG_CONFIG_HOME`).
    public init(
        flavor: String = "opencode1", password: String? = nil, version: String? = nil, heartbeat: Double = 10,
        launcher: [String] = [], port: Int = 0, noPassword: Bool = false, devBuild: Bool = false,
        heartbeatFirst: Bool = false, webAuth: Bool = false, hono401: Bool = false,
        service: String? = nil, environment: [String: String] = [:], extraArguments: [String] = []
    ) throws {
        var arguments = [
            packageRoot + "/scripts/opencode-standin.py", "--port", String(port), "--flavor", flavor, "--quiet",
            "--heartbeat", String(heartbeat),
        ]
        // One word, `--password=…`: a made-up password starts with "-" one time in 64
        // (token_urlsafe), and argparse takes a separate "-…" word for an option.
        if let password { arguments.append("--password=" + password) }
        if let version { arguments += ["--version", version] }
        let options: [(Bool, String)] = [
            (noPassword, "--no-password"), (devBuild, "--dev-build"), (heartbeatFirst, "--heartbeat-first"),
            (webAuth, "--web-auth"), (hono401, "--hono-401"),
        ]
        arguments += options.filter(\.0).map(\.1)
        if let service { arguments.append("--service=" + service) }
        arguments += extraArguments
        let command =
            launcher + ["/usr/bin/env"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + [
                python3
            ] + arguments
        running = try RunningProcess(command[0], Array(command.dropFirst()))
        guard let line = running.waitForLine(containing: "LISTENING", stdout: true, timeout: 15),
            let port = Int(line.split(separator: " ").last ?? "")
        else {
            throw NSError(
                domain: "OpenCodeStandIn", code: 1,
                userInfo: [NSLocalizedDescriptionKey: "stand-in did not start: \(running.stderrText)"])
        }
        self.port = port
        if let password {
            self.password = password
        } else if let printed = running.waitForLine(containing: "PASSWORD ", stdout: true, timeout: 0) {
            self.password = String(printed.dropFirst("PASSWORD ".count))
        } else {
            self.password = nil
        }
    }

    /// POSTs `body` (JSON) to `path` on the stand-in, with `authorization` if given: its status and body.
    public func post(_ path: String, _ body: [String: Any], authorization: String? = nil) -> (status: Int, body: String)
    {
        exchange(
            "POST", path, body: (try? JSONSerialization.data(withJSONObject: body)) ?? Data(),
            authorization: authorization)
    }

    /// Adds a pending permission through the test route (`POST /standin/permission`); its id.
    /// `title` names the session (OpenCode's session route answers it).
    /// `directory`: the project it is asked in (default: the stand-in's own, /home/me/project).
    public func askPermission(
        session: String, permission: String = "bash", patterns: [String], title: String? = nil,
        directory: String? = nil
    ) -> String? {
        var spec: [String: Any] = ["sessionID": session, "permission": permission, "patterns": patterns]
        if let title { spec["title"] = title }
        if let directory { spec["directory"] = directory }
        let answer = post("/standin/permission", spec)
        return (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["id"] as? String
    }

    /// Every reply the stand-in received (`GET /standin/replies`): method, path, body, status.
    public var replies: [[String: Any]] {
        let answer = exchange("GET", "/standin/replies", body: Data(), authorization: nil)
        return
            ((try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["replies"]
            as? [[String: Any]]) ?? []
    }

    /// Basic authorization with the stand-in's password, as a client of it sends.
    public var basicAuthorization: String? {
        password.map { "Basic " + Data("opencode:\($0)".utf8).base64EncodedString() }
    }

    private func exchange(
        _ method: String, _ path: String, body: Data, authorization: String?
    ) -> (status: Int, body: String) {
        let fd = connectLoopback(port)
        guard fd >= 0 else { return (-1, "") }
        defer { close(fd) }
        setSocketTimeout(fd, seconds: 10)
        var head =
            "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        guard writeAll(fd, Array((head + "\r\n").utf8) + [UInt8](body)) else { return (-1, "") }
        let answer = String(decoding: readAll(fd), as: UTF8.self)
        let parts = answer.components(separatedBy: "\r\n\r\n")
        let status = Int(parts.first?.split(separator: " ").dropFirst().first ?? "") ?? -1
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// SIGTERM (a service removes its registration), then SIGKILL if it is still there.
    public func stop() {
        running.signal(SIGTERM)
        if running.waitForExit(timeout: 5) == nil {
            running.signal(SIGKILL)
            _ = running.waitForExit(timeout: 5)
        }
    }

    deinit { stop() }
}
