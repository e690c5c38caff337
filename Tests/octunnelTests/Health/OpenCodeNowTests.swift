import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// OpenCode 2 as it ships now (the stand-in's upstream files are named in the script) and
/// clients as they really connect (`localhost` is ::1 first on many machines), through a real sshd.
@Suite("OpenCode 2 as it ships now, and clients on both loopbacks", .ownThreads, .timeLimit(.minutes(3)))
struct OpenCodeNowTests {
    /// `tunnel check` with exactly the OpenCode variables given (none inherited from the runner).
    private func check(
        _ fixture: TunnelFixture, remotePort: Int, _ variables: [String: String], extra: [String] = []
    ) throws -> ProcessResult {
        try tunnelCheck(
            fixture, remotePort: remotePort, extra: extra, healthTimeout: 5,
            environment: variables.mapValues { Optional($0) })
    }

    /// `check` that must end with `status` and say each of `said` on stderr; its result, for the checks after.
    @discardableResult
    private func expectCheck(
        _ fixture: TunnelFixture, remotePort: Int, _ variables: [String: String], status: Int32 = 0,
        saying said: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessResult {
        let result = try check(fixture, remotePort: remotePort, variables)
        #expect(result.status == status, "\(result.stderr)", sourceLocation: sourceLocation)
        for text in said { #expect(result.stderr.contains(text), "\(result.stderr)", sourceLocation: sourceLocation) }
        return result
    }

    /// GET `path` from `host`:`port` (either loopback), as any client would; nil when it cannot connect.
    private func get(_ host: String, _ port: Int, _ path: String) -> String? {
        guard let socket = try? Sockets.connect(host: host, port: port, timeout: 5) else { return nil }
        defer { socket.close() }
        let fd = socket.number
        setSocketTimeout(fd, seconds: 10)
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard writeAll(fd, Array("GET \(path) HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n\r\n".utf8)) else {
            return nil
        }
        return String(decoding: readAll(fd), as: UTF8.self)
    }

    @Test(
        "2.x with only OPENCODE_PASSWORD set: healthy, and it wins over a stale OPENCODE_SERVER_PASSWORD; the output names the variable, never the password"
    )
    func onlyTheNewVariable() throws {
        let (backend, password) = try OpenCodeStandIn.withFreshPassword(flavor: "opencode2")
        let fixture = try TunnelFixture()

        let only = try expectCheck(
            fixture, remotePort: backend.port, ["OPENCODE_PASSWORD": password],
            saying: ["OpenCode 2.0.17 (API 2) healthy through 127.0.0.1 (/api/info), password from OPENCODE_PASSWORD"])

        let both = try check(
            fixture, remotePort: backend.port, ["OPENCODE_PASSWORD": password, "OPENCODE_SERVER_PASSWORD": "stale"],
            extra: ["--json"])
        #expect(both.status == 0, "\(both.stdout) \(both.stderr)")
        #expect(both.stdout.contains("password from OPENCODE_PASSWORD"))

        // The legacy name alone still works.
        let legacy = try expectCheck(
            fixture, remotePort: backend.port, ["OPENCODE_SERVER_PASSWORD": password],
            saying: ["password from OPENCODE_SERVER_PASSWORD"])

        for result in [only, both, legacy] { #expect(!(result.stdout + result.stderr).contains(password)) }
    }

    @Test(
        "2.x with no password at all (a dev build: version unknown, pid 0): healthy without any variable, and with OPENCODE_PASSWORD empty beside a stale legacy one"
    )
    func noPasswordAtAll() throws {
        let backend = try OpenCodeStandIn(flavor: "opencode2", noPassword: true, devBuild: true)
        #expect(backend.password == nil)
        let fixture = try TunnelFixture()

        try expectCheck(
            fixture, remotePort: backend.port, [:],
            saying: ["OpenCode unknown (API 2) healthy through 127.0.0.1 (/api/info), no password", "✓ events ("])

        // OpenCode's own rule (env.ts): OPENCODE_PASSWORD set but empty means no password, whatever the legacy name says.
        let empty = try expectCheck(
            fixture, remotePort: backend.port, ["OPENCODE_PASSWORD": "", "OPENCODE_SERVER_PASSWORD": "stale"],
            saying: ["healthy through 127.0.0.1 (/api/info), no password (OPENCODE_PASSWORD is empty)"])
        #expect(!empty.stderr.contains("stale"))
    }

    @Test("2.x sends a `: heartbeat` comment before server.connected: the event stream still counts as ready")
    func heartbeatFirst() throws {
        let backend = try OpenCodeStandIn(flavor: "opencode2", heartbeat: 0.2, heartbeatFirst: true)
        let password = try #require(backend.password)
        let fixture = try TunnelFixture()
        try expectCheck(
            fixture, remotePort: backend.port, ["OPENCODE_PASSWORD": password],
            saying: ["✓ events (", "/api/event sent server.connected"])
    }

    @Test(
        "the web shell: 2.x answers / without a password through tunnel up; with its web app behind the password too, a check without one passes on OpenCode 2's own 401 (never 1)"
    )
    func webShell() throws {
        let backend = try OpenCodeStandIn(flavor: "opencode2")
        let password = try #require(backend.password)
        let fixture = try TunnelFixture()
        let tunnel = try RunningProcess(
            octunnelBinary,
            [
                "tunnel", "up", "--home", fixture.home.path, fixture.target, "--local-port", "0",
                "--remote-port", String(backend.port), "--connect-timeout", "10",
            ],
            environment: inheritedEnvironment.merging(["OPENCODE_PASSWORD": password]) { $1 })
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        let health = tunnel.waitForLine(containing: "health ")
        #expect(health?.contains("health ✓ OpenCode 2.0.17 (API 2)") == true, "\(tunnel.stderrText)")
        #expect(health?.contains("password from OPENCODE_PASSWORD") == true, "\(tunnel.stderrText)")
        let shell = try #require(get("127.0.0.1", port, "/"))
        #expect(shell.hasPrefix("HTTP/1.1 200"), "\(shell)")
        #expect(shell.lowercased().contains("content-type: text/html"))
        #expect(shell.contains("<div id=\"root\">"))
        let api = try #require(get("127.0.0.1", port, "/api/info"))
        #expect(api.hasPrefix("HTTP/1.1 401"), "\(api)")
        #expect(api.contains("WWW-Authenticate: Basic realm=\"Secure Area\""))
        #expect(api.contains(#"{"_tag":"UnauthorizedError","message":"Authentication required"}"#))

        // The web app guarded too (an empty 401 on every page, /global/health included).
        let guarded = try OpenCodeStandIn(flavor: "opencode2", password: password, webAuth: true)
        let none = try expectCheck(
            fixture, remotePort: guarded.port, [:],
            saying: ["OpenCode 2 reached through 127.0.0.1 (/api/info): it asks for a password"])
        #expect(!none.stderr.contains("OpenCode 1"))
        try expectCheck(fixture, remotePort: guarded.port, ["OPENCODE_PASSWORD": password])
    }

    @Test(
        "1.x's refusal is an empty 401 (its Effect server) or Hono's \"Unauthorized\": either says OpenCode 1",
        arguments: [false, true])
    func oneRefusals(hono: Bool) throws {
        let backend = try OpenCodeStandIn(flavor: "opencode1", password: "s3cret", hono401: hono)
        let fixture = try TunnelFixture()
        try expectCheck(
            fixture, remotePort: backend.port, [:], status: 79,
            saying: ["OpenCode 1 was started with OPENCODE_SERVER_PASSWORD, so it asks for a password"])
        try expectCheck(fixture, remotePort: backend.port, ["OPENCODE_PASSWORD": "s3cret"])
    }

    @Test(
        "tunnel up listens on 127.0.0.1 and ::1 on the same port (with --local-port 0 too); status and the forwarding line show both"
    )
    func bothLoopbacks() throws {
        guard let probe = try? Sockets.listen(bind: "::1", port: 0) else {
            try Test.cancel("this machine has no ::1 (noIPv6Loopback covers that case)")
        }
        probe.socket.close()
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(remotePort: backend.port, extra: ["--no-health"])
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        let line = try #require(tunnel.waitForLine(containing: "forwarding "))
        #expect(
            line.contains("forwarding 127.0.0.1:\(port) and [::1]:\(port) → VPS 127.0.0.1:\(backend.port)"), "\(line)")
        for host in ["127.0.0.1", "::1"] {
            let answer = get(host, port, "/global/health")
            #expect(answer?.hasPrefix("HTTP/1.1 200") == true, "\(host): \(answer ?? "could not connect")")
            #expect(answer?.contains("\"healthy\":true") == true)
        }
        let status = try fixture.run(["tunnel", "status"])
        #expect(
            status.stdout.contains("127.0.0.1:\(port) and [::1]:\(port) → VPS 127.0.0.1:\(backend.port)"),
            "\(status.stdout) \(status.stderr)")
        let json = try fixture.run(["tunnel", "status", "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(object["localHosts"] as? [String] == ["127.0.0.1", "::1"], "\(json.stdout)")
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0)
    }

    @Test("--bind 127.0.0.1 means that address alone: ::1 is refused")
    func explicitBind() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        let tunnel = try fixture.up(remotePort: backend.port, extra: ["--no-health", "--bind", "127.0.0.1"])
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        let line = try #require(tunnel.waitForLine(containing: "forwarding "))
        #expect(line.contains("forwarding 127.0.0.1:\(port) → VPS"), "\(line)")
        #expect(get("127.0.0.1", port, "/global/health")?.hasPrefix("HTTP/1.1 200") == true)
        #expect(get("::1", port, "/global/health") == nil, "nothing of ours listens on [::1]:\(port)")
        let json = try fixture.run(["tunnel", "status", "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(object["localHosts"] as? [String] == ["127.0.0.1"], "\(json.stdout)")
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0)
    }

    @Test(
        "a machine without ::1 (IPv6 off on lo, in a namespace of the test's own): tunnel up serves 127.0.0.1 and says nothing about ::1"
    )
    func noIPv6Loopback() throws {
        let net = try namespacesOrSkip("OpenCodeNowTests.noIPv6Loopback") { try NetworkNamespacePair() }
        defer { net.remove() }
        let inside = net.exec(.client)
        let off = try run(inside[0], Array(inside.dropFirst()) + ["sysctl", "-w", "net.ipv6.conf.lo.disable_ipv6=1"])
        try #require(off.status == 0, "\(off.stderr)")
        let addresses = try run(inside[0], Array(inside.dropFirst()) + ["ip", "-6", "addr", "show", "dev", "lo"])
        try #require(!addresses.stdout.contains("::1"), "::1 is still there: \(addresses.stdout)")

        let backend = try OpenCodeStandIn(launcher: inside)
        let fixture = try TunnelFixture(sshdLauncher: inside)
        let tunnel = try fixture.up(remotePort: backend.port, launcher: inside)
        let port = tunnel.forwardedPort()
        let health = tunnel.waitForLine(containing: "health ")
        tunnel.signal(SIGINT)
        let exit = tunnel.waitForExit(timeout: 5)
        // Everything in the namespace stops before it goes (defer above).
        backend.stop()
        fixture.sshd.stop(hard: true)
        #expect(port != nil, "\(tunnel.stderrText)")
        #expect(tunnel.stderrText.contains("forwarding 127.0.0.1:\(port ?? 0) → VPS"), "\(tunnel.stderrText)")
        #expect(!tunnel.stderrText.contains("::1"), "\(tunnel.stderrText)")
        #expect(!tunnel.stderrText.contains("warning"), "\(tunnel.stderrText)")
        #expect(health?.contains("health ✓ OpenCode 1.0.0") == true, "\(tunnel.stderrText)")
        #expect(exit == 0)
    }
}
