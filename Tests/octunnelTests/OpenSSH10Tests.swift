import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// What a current sshd (OpenSSH 10, Debian 13) does that the suite's older one may not: strict
/// key exchange with libssh2 1.11.1, and PerSourcePenalties (OpenSSH 9.8+). scripts/test.sh runs
/// these against Debian 13's sshd (`OCTUNNEL_SSHD_ROOT`) as well as the host's.
@Suite("today's sshd: strict key exchange and PerSourcePenalties", .timeLimit(.minutes(3)))
struct OpenSSH10Tests {
    @Test("strict key exchange (kex-strict-*-v00@openssh.com, the Terrapin fix) is negotiated exactly when the binary's libssh2 is 1.11.1 or newer")
    func strictKeyExchange() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture(sshdConfig: "LogLevel DEBUG3")
        let result = try fixture.run(["tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10"])
        #expect(result.status == 0, "\(result.stderr)")
        let log = fixture.sshd.log
        // This sshd offers it (OpenSSH 9.6+, and Debian 12's 9.2 since its Terrapin fix): sshd logs its own KEXINIT.
        try #require(log.contains("kex-strict-s-v00@openssh.com"), "this sshd does not offer strict key exchange: \(log.suffix(1500))")
        let strict = log.contains("will use strict KEX ordering")
        if octunnelRunsOnLibSSH2(atLeast: [1, 11, 1]) {
            #expect(strict, "libssh2 \(octunnelLibSSH2Version) did not negotiate strict key exchange: \(log.suffix(2000))")
        } else {
            // libssh2 1.10 has no kex-strict-c-v00: the session is open to Terrapin (CVE-2023-48795), docs/security.md says so.
            #expect(!strict, "libssh2 \(octunnelLibSSH2Version) negotiated strict key exchange?")
        }
    }

    @Test("PerSourcePenalties (OpenSSH 9.8+), provoked by bare TCP connections: tunnel check names the penalty, not 'not an SSH server'; tunnel up serves again on its own once it ends")
    func perSourcePenalty() throws {
        guard SSHDServer.isOpenSSH(atLeast: 9, 8) else {
            let version = SSHDServer.openSSHVersion.map { "\($0.major).\($0.minor)" } ?? "?"
            try Test.cancel("this sshd is OpenSSH \(version), PerSourcePenalties came in 9.8: scripts/test.sh runs it against Debian 13's (OCTUNNEL_SSHD_ROOT)")
        }
        let backend = try OpenCodeStandIn()
        // The defaults (noauth 1 s, enforced from 15 s, up to 10 min) made short: enforced from 4 s, at most 8 s.
        let fixture = try TunnelFixture(sshdConfig: "PerSourcePenalties noauth:2s min:4s max:8s")
        // Bare connections that never authenticate until sshd closes one before its greeting.
        var bare = 0
        var penalized = false
        // One at a time (never past MaxStartups); sshd records each penalty when that connection's
        // sshd-session has exited, so a few more than needed may be made.
        while !penalized && bare < 200 {
            let fd = connectLoopback(fixture.sshd.port)
            try #require(fd >= 0, "sshd refused a connection")
            setSocketTimeout(fd, seconds: 10)
            var byte: UInt8 = 0
            penalized = read(fd, &byte, 1) <= 0
            close(fd)
            bare += 1
        }
        try #require(penalized, "no connection was dropped after \(bare) bare connections: \(fixture.sshd.log.suffix(1500))")
        #expect(fixture.sshd.log.contains("penalty: connections without attempting authentication"), "\(fixture.sshd.log.suffix(1500))")
        let checked = try fixture.run(["tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10"])
        #expect(checked.status == 69, "\(checked.stderr)")
        #expect(!checked.stderr.contains("is not an SSH server"), "\(checked.stderr)")
        #expect(checked.stderr.contains("closed the connection before its SSH greeting") && checked.stderr.contains("PerSourcePenalties"),
                "\(checked.stderr)")

        let started = Date()
        let tunnel = try fixture.up(remotePort: backend.port)
        defer { tunnel.stopGracefullyOrKill() }
        // Hang guard: the penalty lasts at most 8 s, the retries back off to a few seconds.
        let port = try #require(tunnel.forwardedPort(timeout: 90), "\(tunnel.stderrText)")
        let response = try #require(httpGet(port: port, path: "/global/health"))
        #expect(response.contains("\"healthy\":true"))
        let said = tunnel.stderr.filter { $0.contains("PerSourcePenalties") }
        #expect(said.count == 1, "said \(said.count) times: \(tunnel.stderrText)")
        print("penalized after \(bare) bare connections; tunnel up served after \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
