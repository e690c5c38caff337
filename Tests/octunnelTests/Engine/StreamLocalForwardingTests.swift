import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing
#if canImport(Glibc)
    import Glibc
#endif

/// What docs/security.md says octunnel's restricted authorized_keys lines do about Unix
/// sockets, checked against the real sshd: `permitopen` covers `-L` to a socket path (refused),
/// but `permitlisten` does not cover `-R` of a socket path (a listen the lines cannot forbid);
/// `AllowStreamLocalForwarding no` in sshd_config does, and octunnel's own tunnel still works there.
@Suite("Unix-socket forwarding with the restricted lines, against the real sshd", .ownThreads, .timeLimit(.minutes(3)))
struct StreamLocalForwardingTests {
    struct Outcome: Sendable {
        let listened: Bool
        let connectDenied: Bool
        let log: String
    }

    /// Tries `ssh -R SOCKET:…` and `ssh -L PORT:SOCKET` with `line` in authorized_keys.
    static func attempt(listenLine: Bool, sshdConfig: String) throws -> Outcome {
        let home = try TempDirectory("octunnel-streamlocal")
        let store = KeyStore(directory: OctunnelDirectory(path: home.file("oct")))
        let key = try store.generate(comment: "streamlocal", rotate: false).publicKey
        let line =
            listenLine
            ? listenAuthorizedKeysLine(key, remotePort: 18080) : restrictedAuthorizedKeysLine(key, remotePort: 18080)
        let sshd = try SSHDServer(authorizedKeys: [line], extraConfig: sshdConfig)
        defer { sshd.stop() }
        let options = [
            "-i", store.privateKeyPath, "-o", "UserKnownHostsFile=\(home.file("known_hosts"))", "-o",
            "StrictHostKeyChecking=accept-new",
            "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes", "-p", String(sshd.port), "-N",
        ]

        let socket = home.file("listen.sock")
        let remote = try RunningProcess("/usr/bin/ssh", options + ["-R", "\(socket):127.0.0.1:9", "root@127.0.0.1"])
        _ = waitUntil(timeout: 15) { fileExists(socket) || !remote.isRunning }
        let listened = fileExists(socket) && remote.isRunning
        remote.signal(SIGTERM)
        _ = remote.waitForExit(timeout: 5)

        let target = home.file("target.sock")
        let localPort = freePort()
        let local = try RunningProcess(
            "/usr/bin/ssh", options + ["-L", "127.0.0.1:\(localPort):\(target)", "root@127.0.0.1"])
        defer { local.signal(SIGTERM); _ = local.waitForExit(timeout: 5) }
        var denied = false
        _ = waitUntil(timeout: 15) {
            let fd = connectLoopback(localPort)
            if fd >= 0 { close(fd) }
            denied =
                sshd.log.contains("connect to path \(target), but the request was denied")
                || sshd.log.contains("refused streamlocal port forward")
            return denied
        }
        return Outcome(listened: listened, connectDenied: denied, log: sshd.log)
    }

    @Test(
        "octunnel's restricted lines refuse -L to a socket path but cannot refuse -R of one (the documented hole)",
        arguments: [false, true])
    func unixSockets(listenLine: Bool) async throws {
        let open = try await offPool { try Self.attempt(listenLine: listenLine, sshdConfig: "") }
        #expect(open.listened, "the documented hole closed? \(open.log)")
        #expect(open.connectDenied, "\(open.log)")
    }

    /// docs/security.md's advice is `AllowStreamLocalForwarding no`, "which costs octunnel
    /// nothing": octunnel's own tunnel through the restricted line works on such a VPS, where
    /// the hole is closed.
    @Test(
        "on a VPS set AllowStreamLocalForwarding no (docs/security.md's advice): octunnel's tunnel check passes through the restricted line, and -R of a socket is refused"
    )
    func theAdviceCostsOctunnelNothing() async throws {
        let backend = try OpenCodeStandIn()
        defer { backend.stop() }
        let result = try await offPool {
            let fixture = try TunnelFixture(restricted: backend.port, sshdConfig: "AllowStreamLocalForwarding no")
            return try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10",
            ])
        }
        #expect(result.status == 0, "\(result.stderr)")
        let closed = try await offPool {
            try Self.attempt(listenLine: false, sshdConfig: "AllowStreamLocalForwarding no")
        }
        #expect(!closed.listened, "\(closed.log)")
        #expect(closed.connectDenied, "\(closed.log)")
    }
}
