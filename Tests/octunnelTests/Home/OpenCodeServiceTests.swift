import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `home up` on a home machine where OpenCode 2 runs as its background service (issue 38),
/// through a real sshd, both ends octunnel: the stand-in registers itself as the service does,
/// in the test's own XDG directories.
@Suite("home up finds OpenCode 2's background service", .ownThreads, .timeLimit(.minutes(3)))
struct OpenCodeServiceTests {
    @Test(
        "no port flags: home up forwards to the service its files name, its health test uses the service's password (named, never shown); the laptop, with no password, passes on OpenCode 2's 401; the service restarted on another port is followed without a restart"
    )
    func serviceFoundAndFollowed() async throws {
        let directories = try FarSideChoicesTests.ServiceDirectories()
        let xdg = directories.environment
        var service = try OpenCodeStandIn(flavor: "opencode2", service: "latest", environment: xdg)
        defer { service.stop() }
        let fixture = try TunnelFixture()
        let remotePort = freePort()
        let environment = inheritedEnvironment.merging(xdg) { $1 }
        let home = try RunningProcess(
            octunnelBinary,
            [
                "home", "up", "--home", fixture.home.path, fixture.target, "--remote-port", String(remotePort),
                "--connect-timeout", "10",
            ], environment: environment)
        defer { home.stopGracefullyOrKill() }
        let found = try await offPool { home.waitForLine(containing: "home: OpenCode 2's background service") }
        #expect(
            found
                == "home: OpenCode 2's background service (latest) at 127.0.0.1:\(service.port), from \(directories.registration); its password from \(directories.registration), kept on this machine",
            "\(home.stderrText)")
        let health = try await offPool { home.waitForLine(containing: "home health ") }
        #expect(
            health
                == "home health ✓ OpenCode 2.0.17 (API 2) on 127.0.0.1:\(service.port), event stream /api/event ready, password from OpenCode's service file \(directories.registration)",
            "\(home.stderrText)")
        try #require(try await offPool { home.homeListening() } != nil, "\(home.stderrText)")

        let laptop = try fixture.up(remotePort: remotePort)
        defer { laptop.stopGracefullyOrKill() }
        let port = try #require(try await offPool { laptop.forwardedPort() }, "\(laptop.stderrText)")
        let laptopHealth = try await offPool { laptop.waitForLine(containing: "health ") }
        #expect(
            laptopHealth?.hasPrefix("health ✓ OpenCode 2 reached through 127.0.0.1 (it asks for a password;") == true,
            "\(laptop.stderrText)")
        #expect(Self.answeredByOpenCode2(try await offPool { httpGet(port: port, path: "/api/info") }))

        // Restarted on another port (`opencode service set port`, or any restart): the next
        // connection goes to the new address, said once.
        let old = service.port
        service.stop()
        service = try OpenCodeStandIn(flavor: "opencode2", service: "latest", environment: xdg)
        #expect(service.port != old)
        let answer = try await offPool { httpGet(port: port, path: "/api/info") }
        #expect(Self.answeredByOpenCode2(answer), "\(answer ?? "no answer")\n\(home.stderrText)")
        let moved = try await offPool { home.waitForLine(containing: "moved from", timeout: 5) }
        #expect(
            moved
                == "home: OpenCode 2's background service moved from 127.0.0.1:\(old) to 127.0.0.1:\(service.port) (\(directories.registration)): forwarding there",
            "\(home.stderrText)")
        for output in [home.stderrText, laptop.stderrText] {
            #expect(!output.contains(service.password ?? "-never-"))
        }
    }

    /// OpenCode 2's own refusal (no password sent): the request reached a running OpenCode 2.
    static func answeredByOpenCode2(_ answer: String?) -> Bool {
        answer?.hasPrefix("HTTP/1.1 401") == true && answer?.contains(#""_tag":"UnauthorizedError""#) == true
    }
}
