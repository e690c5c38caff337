import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `tunnel status` / `home status` against the built binary and a real `tunnel up`.
@Suite("tunnel status and home status", .ownThreads, .timeLimit(.minutes(3)))
struct StatusCommandTests {
    @Test(
        "status --json of a running tunnel up reports connected, the host key, the connection the test holds and OpenCode's health"
    )
    func statusOfRunningTunnel() throws {
        // A quick heartbeat: the health test's event stream, closed by the test, ends at the next one.
        let backend = try OpenCodeStandIn(version: "1.4.7", heartbeat: 0.5)
        let fixture = try TunnelFixture()
        // --no-notify: the event stream octunnel would follow for notifications is a connection too.
        let tunnel = try fixture.up(remotePort: backend.port, extra: ["--profile", "work", "--no-notify"])
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)")
        #expect(tunnel.waitForLine(containing: "health ✓ OpenCode 1.4.7") != nil, "\(tunnel.stderrText)")

        // One connection held open through the tunnel (a request answered, kept alive).
        let held = connectLoopback(port)
        try #require(held >= 0)
        defer { close(held) }
        setSocketTimeout(held, seconds: 10)
        let request = Array("GET /global/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        #expect(writeAll(held, request))
        var answer = [UInt8](repeating: 0, count: 4096)
        #expect(read(held, &answer, answer.count) > 0)

        let socket = fixture.home.file("run/tunnel-work.sock")
        #expect(try mode(of: fixture.home.file("run")) == 0o700)
        #expect(try mode(of: socket) == 0o600)

        // Once the health test's connections have closed, ours is the one open connection.
        var result = try fixture.run(["tunnel", "status", "--json", "--profile", "work"])
        #expect(
            waitUntil(timeout: 15) {
                result = (try? fixture.run(["tunnel", "status", "--json", "--profile", "work"])) ?? result
                return result.stdout.contains("\"openConnections\":1,")
            }, "\(result)")
        #expect(result.status == 0, "\(result)")
        let data = Data(result.stdout.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(result.stdout)")
        #expect(object["state"] as? String == "connected")
        #expect(object["status"] as? String == "connected")
        #expect(object["hostKey"] as? String == fixture.sshd.hostKeyFingerprint)
        #expect(object["target"] as? String == fixture.target)
        #expect(object["local"] as? String == "127.0.0.1:\(port)")
        #expect(object["localPort"] as? Int == port)
        #expect(object["remote"] as? String == "127.0.0.1:\(backend.port)")
        #expect(object["openConnections"] as? Int == 1)
        #expect((object["totalConnections"] as? Int ?? 0) >= 2)
        #expect(object["bytesOut"] as? Int ?? 0 >= request.count)
        #expect(object["bytesIn"] as? Int ?? 0 > 0)
        #expect(object["reconnects"] as? Int == 0)
        #expect(object["pid"] as? Int == Int(tunnel.pid))
        #expect(object["profile"] as? String == "work")
        #expect(object["connectedSince"] is String)
        #expect(object["cipher"] is String)
        #expect(object["lastError"] is NSNull)
        let health = try #require(object["health"] as? [String: Any], "\(result.stdout)")
        #expect(health["ok"] as? Bool == true)
        #expect(health["version"] as? String == "1.4.7")
        #expect(health["checkedAt"] is String)
        for key in [
            "state", "target", "hostKey", "cipher", "connectedSince", "local", "remote", "openConnections",
            "totalConnections", "bytesIn", "bytesOut", "reconnects", "lastError", "health",
        ] {
            #expect(object[key] != nil, "missing \(key)")
        }

        // For people: the summary line, then aligned details.
        let human = try fixture.run(["tunnel", "status", "--profile", "work"])
        #expect(human.status == 0, "\(human)")
        let lines = human.stdout.split(separator: "\n").map(String.init)
        let first = try #require(lines.first)
        #expect(first.hasPrefix("connected to 127.0.0.1:\(fixture.sshd.port) for "), "\(first)")
        #expect(first.contains(" · 1 open connection · OpenCode 1.4.7 healthy "), "\(first)")
        #expect(
            lines.contains {
                $0.hasPrefix("  forwarding  127.0.0.1:\(port)") && $0.hasSuffix("→ VPS 127.0.0.1:\(backend.port)")
            }, "\(human.stdout)")
        #expect(
            lines.contains { $0.hasPrefix("  host key    ssh-ed25519 \(fixture.sshd.hostKeyFingerprint)") },
            "\(human.stdout)")

        // Another profile (and the other role) has nothing running.
        let other = try fixture.run(["tunnel", "status"])
        #expect(other.status == 3, "\(other)")

        // A clean stop removes the socket: status says nothing runs.
        tunnel.signal(SIGTERM)
        #expect(tunnel.waitForExit(timeout: 5) == 0)
        #expect(!fileExists(socket))
        #expect(try fixture.run(["tunnel", "status", "--profile", "work"]).status == 3)
    }

    @Test("status with nothing running: one line on stderr, nothing on stdout, exit 3; no home is created")
    func nothingRunning() throws {
        let dir = try TempDirectory()
        let home = dir.path + "/home"
        for arguments in [
            ["tunnel", "status"], ["tunnel", "status", "--json"], ["home", "status"],
            ["home", "status", "--json", "--profile", "work"],
        ] {
            let result = try Octunnel.run(arguments + ["--home", home], in: dir.path)
            #expect(result.status == 3, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        let tunnel = try Octunnel.run(["tunnel", "status", "--home", home], in: dir.path)
        #expect(tunnel.stderr == "octunnel: no tunnel running\n")
        let homeSide = try Octunnel.run(["home", "status", "--profile", "work", "--home", home], in: dir.path)
        #expect(homeSide.stderr == "octunnel: no home side running for profile work\n")
        #expect(!fileExists(home), "status created the home")
    }

    @Test(
        "a socket left by a SIGKILLed tunnel is detected, not trusted, and the next tunnel up replaces it; a file that is not a socket is left alone"
    )
    func staleSocketFromKilledTunnel() throws {
        let echo = try TCPTestServer.echo()
        let fixture = try TunnelFixture()
        let socket = fixture.home.file("run/tunnel.sock")
        let first = try fixture.up(remotePort: echo.port, extra: ["--no-health"])
        _ = try #require(first.forwardedPort(), "\(first.stderrText)")
        #expect(try fixture.run(["tunnel", "status"]).status == 0)
        first.signal(SIGKILL)
        _ = first.waitForExit(timeout: 5)
        #expect(fileExists(socket), "the killed tunnel's socket should still be there for this test to mean anything")

        let stale = try fixture.run(["tunnel", "status"])
        #expect(stale.status == 3, "\(stale)")
        #expect(
            stale.stderr.contains("no tunnel running: the status socket \(socket) was left by a process that ended"),
            "\(stale.stderr)")

        let second = try fixture.up(remotePort: echo.port, extra: ["--no-health"])
        let port = try #require(second.forwardedPort(), "\(second.stderrText)")
        #expect(!second.stderrText.contains("warning"), "\(second.stderrText)")
        let status = try fixture.run(["tunnel", "status", "--json"])
        #expect(status.status == 0, "\(status)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(object["pid"] as? Int == Int(second.pid))
        #expect(object["state"] as? String == "connected")
        #expect(roundTrip(port: port, seed: 13))

        // A second tunnel of the same profile does not take over the live socket.
        let third = try fixture.up(remotePort: echo.port, extra: ["--no-health"])
        _ = try #require(third.forwardedPort(), "\(third.stderrText)")
        #expect(third.stderrText.contains("is running and answers there; this one will not"), "\(third.stderrText)")
        let still = try fixture.run(["tunnel", "status", "--json"])
        #expect(still.stdout.contains("\"pid\":\(second.pid)"), "\(still)")
        third.signal(SIGTERM)
        #expect(third.waitForExit(timeout: 5) == 0)
        #expect(fileExists(socket), "the third tunnel removed the second's socket")

        second.signal(SIGTERM)
        #expect(second.waitForExit(timeout: 5) == 0)
        // Not a socket: never removed, never trusted; the tunnel runs without status.
        try writeText("user data\n", to: socket)
        let fourth = try fixture.up(remotePort: echo.port, extra: ["--no-health"])
        _ = try #require(fourth.forwardedPort(), "\(fourth.stderrText)")
        #expect(fourth.stderrText.contains("it is not a socket; it was left in place"), "\(fourth.stderrText)")
        #expect(try readText(socket) == "user data\n")
        let refused = try fixture.run(["tunnel", "status"])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("is not trusted: it is not a socket"), "\(refused.stderr)")
    }

    @Test(
        "status clients that connect and never read do not block the tunnel: 16 MiB through it intact, descriptors back to normal"
    )
    func clientsThatNeverRead() async throws {
        let fixture = try TunnelFixture()
        let (tunnel, port) = try fixture.upToEcho(extra: ["--no-health"])
        #expect(roundTrip(port: port, seed: 1))
        let socket = fixture.home.file("run/tunnel.sock")
        let descriptorsBefore = openDescriptors(tunnel.pid)

        // 200 clients connect, send nothing, read nothing and stay connected.
        var hung: [Int32] = []
        defer { hung.forEach { close($0) } }
        for _ in 0..<200 {
            let fd = try connectUnix(socket)
            hung.append(fd)
        }
        let payload = patternBytes(16 << 20, seed: 16)
        let started = Date()
        let received: [UInt8] = try await offPool {
            guard let answer = sendAndReceive(port: port, payload: payload, timeout: 120) else {
                throw HarnessError("connect to the tunnel failed")
            }
            return answer
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(received.count == payload.count)
        #expect(received == payload, "bytes through the tunnel were lost or changed")
        // No speed claim (issue 25): 1.2 s alone, 90 s once in a loaded full run; the sockets'
        // 120 s timeout is the hang guard. The loop's freedom is what is checked: the bytes arrive.
        print("16 MiB echoed beside 200 silent status clients in \(String(format: "%.1f", seconds)) s")

        // Each was answered and dropped: the tunnel holds none of them.
        #expect(
            waitUntil(timeout: 10) { openDescriptors(tunnel.pid) <= descriptorsBefore + 1 },
            "the tunnel holds \(openDescriptors(tunnel.pid) - descriptorsBefore) more descriptors")
        // Their answers wait in their own sockets; a status asked now still comes at once.
        var firstReply = [UInt8](repeating: 0, count: 64)
        #expect(read(hung[0], &firstReply, firstReply.count) > 0)
        let status = try fixture.run(["tunnel", "status", "--json"])
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("\"totalConnections\":2"), "\(status.stdout)")
        #expect(tunnel.isRunning)
    }
}

/// A blocking Unix stream socket connected to `path`.
private func connectUnix(_ path: String) throws -> Int32 {
    let fd = closeOnExecStreamSocket(AF_UNIX)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let bytes = Array(path.utf8)
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw HarnessError("connect \(path): \(reason)")
    }
    return fd
}

/// How many descriptors process `pid` has open.
private func openDescriptors(_ pid: pid_t) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
}
