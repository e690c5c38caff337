import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// What a current sshd (OpenSSH 10, Debian 13) does that the suite's older one may not: strict
/// key exchange with libssh2 1.11.1, and PerSourcePenalties (OpenSSH 9.8+). scripts/test.sh runs
/// these against Debian 13's sshd (`OCTUNNEL_SSHD_ROOT`) as well as the host's.
@Suite("today's sshd: strict key exchange and PerSourcePenalties", .ownThreads, .timeLimit(.minutes(3)))
struct OpenSSH10Tests {
    @Test(
        "strict key exchange (kex-strict-*-v00@openssh.com, the Terrapin fix) is negotiated exactly when the binary's libssh2 is 1.11.1 or newer"
    )
    func strictKeyExchange() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture(sshdConfig: "LogLevel DEBUG3")
        let result = try fixture.run([
            "tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let log = fixture.sshd.log
        // This sshd offers it (OpenSSH 9.6+, and Debian 12's 9.2 since its Terrapin fix): sshd logs its own KEXINIT.
        try #require(
            log.contains("kex-strict-s-v00@openssh.com"),
            "this sshd does not offer strict key exchange: \(log.suffix(1500))")
        let strict = log.contains("will use strict KEX ordering")
        if octunnelRunsOnLibSSH2(atLeast: [1, 11, 1]) {
            #expect(
                strict, "libssh2 \(octunnelLibSSH2Version) did not negotiate strict key exchange: \(log.suffix(2000))")
        } else {
            // libssh2 1.10 has no kex-strict-c-v00: the session is open to Terrapin (CVE-2023-48795), docs/security.md says so.
            #expect(!strict, "libssh2 \(octunnelLibSSH2Version) negotiated strict key exchange?")
        }
    }

    @Test(
        "a session's sshd processes are found by their parent's pid (through chroot too) and end with sshd: sshd-session on OpenSSH 9.8+, sshd before"
    )
    func sessionProcessesStopped() throws {
        try TunnelFixture.withTunnelToStandIn { fixture, _, _ in
            let sessions = fixture.sshd.sessionProcesses
            let expected = SSHDServer.isOpenSSH(atLeast: 9, 8) ? "sshd-session" : "sshd"
            #expect(
                sessions.contains { $0.name == expected },
                "OpenSSH \(String(describing: SSHDServer.openSSHVersion)): \(sessions)")
            fixture.sshd.stop()
            // Gone, or a zombie waiting for a reaper that is not this process (sshd was their parent). Hang guard 10 s.
            let gone = waitUntil(timeout: 10) {
                sessions.allSatisfy { session in
                    guard let stat = try? String(contentsOfFile: "/proc/\(session.pid)/stat", encoding: .utf8),
                        let close = stat.lastIndex(of: ")")
                    else { return true }
                    return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
                }
            }
            #expect(gone, "still running after sshd stopped: \(sessions)")
        }
    }

    @Test(
        "twenty tunnel checks in a row draw no penalty from a stock OpenSSH 9.8+ sshd: each authenticates, none is a bare connection"
    )
    func checksDrawNoPenalty() throws {
        guard SSHDServer.isOpenSSH(atLeast: 9, 8) else {
            try Test.cancel(
                "this sshd has no PerSourcePenalties (OpenSSH 9.8+): scripts/test.sh runs it against Debian 13's (OCTUNNEL_SSHD_ROOT)"
            )
        }
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture()
        for round in 1...20 {
            let result = try fixture.run([
                "tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10",
            ])
            try #require(result.status == 0, "check \(round): \(result.stderr)")
        }
        let log = fixture.sshd.log
        // One bare connection is the harness's own: SSHDServer's readiness probe.
        let penalties = log.components(separatedBy: "penalty: connections without attempting authentication").count - 1
        #expect(
            penalties <= 1 && !log.contains("activating") && !log.contains("drop connection"), "\(log.suffix(2000))")
    }

    @Test(
        "PerSourcePenalties (OpenSSH 9.8+), provoked by bare TCP connections: tunnel check names the penalty, not 'not an SSH server'; tunnel up serves again on its own once it ends"
    )
    func perSourcePenalty() throws {
        guard SSHDServer.isOpenSSH(atLeast: 9, 8) else {
            let version = SSHDServer.openSSHVersion.map { "\($0.major).\($0.minor)" } ?? "?"
            try Test.cancel(
                "this sshd is OpenSSH \(version), PerSourcePenalties came in 9.8: scripts/test.sh runs it against Debian 13's (OCTUNNEL_SSHD_ROOT)"
            )
        }
        let backend = try OpenCodeStandIn()
        // The defaults (noauth 1 s, enforced from 15 s, up to 10 min) made short: enforced from 4 s, at most 8 s.
        let fixture = try TunnelFixture(sshdConfig: "PerSourcePenalties noauth:2s min:4s max:8s")
        // Bare connections that never authenticate, one every 20 ms (one at a time, never near
        // MaxStartups) until sshd drops one before its greeting (\"Not allowed at this time\"). sshd records each penalty once that
        // connection's sshd-session has exited and enforces it a moment later, so a few more than
        // the minimum are made. Hang guard: 60 s (about 1 s here).
        var bare = 0
        let penalized = waitUntil(timeout: 60) {
            let fd = connectLoopback(fixture.sshd.port)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            setSocketTimeout(fd, seconds: 10)
            var bytes = [UInt8](repeating: 0, count: 64)
            bare += 1
            // A dropped connection gets "Not allowed at this time\r\n" (OpenSSH 9.8+) or nothing, then EOF.
            let count = read(fd, &bytes, bytes.count)
            return !bytes[..<max(count, 0)].starts(with: Array("SSH-".utf8))
        }
        try #require(
            penalized,
            "no connection was dropped in 60 s, after \(bare) bare connections: \(fixture.sshd.log.suffix(1500))")
        #expect(
            fixture.sshd.log.contains("drop connection")
                && fixture.sshd.log.contains("penalty: connections without attempting authentication"),
            "\(fixture.sshd.log.suffix(1500))")
        let checked = try fixture.run([
            "tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10",
        ])
        expectPenaltyNamed(checked)

        let started = Date()
        let tunnel = try fixture.up(remotePort: backend.port)
        defer { tunnel.stopGracefullyOrKill() }
        // Hang guard: the penalty lasts at most 8 s, the retries back off to a few seconds.
        let port = try #require(tunnel.forwardedPort(timeout: 90), "\(tunnel.stderrText)")
        let response = try #require(httpGet(port: port, path: "/global/health"))
        #expect(response.contains("\"healthy\":true"))
        let said = tunnel.stderr.filter { $0.contains("PerSourcePenalties") }
        #expect(said.count == 1, "said \(said.count) times: \(tunnel.stderrText)")
        print(
            "penalized after \(bare) bare connections; tunnel up served after \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
        )
    }
}
