import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A VPS hardened as the ssh-audit guides say (issue 26): on libssh2 ≥ 1.11 every layer
/// passes; on 1.10 the handshake names the MACs and the ways out, and nothing the server offers.
@Suite("a VPS hardened by the common guides", .ownThreads, .timeLimit(.minutes(2)))
struct HardenedServerTests {
    static let config = """
        KexAlgorithms sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org
        Ciphers chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-gcm@openssh.com,aes256-ctr,aes192-ctr,aes128-ctr
        MACs hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,umac-128-etm@openssh.com
        HostKeyAlgorithms ssh-ed25519
        """

    @Test("tunnel check against the hardened config: all layers pass on libssh2 1.11; on 1.10 the message names the MACs and the fix, nothing else")
    func hardenedConfig() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture(sshdConfig: Self.config)
        let result = try fixture.run(["tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10"])
        // The libssh2 the binary runs on (its --version), not the host's: the Debian 13 leg runs one built there.
        if octunnelRunsOnLibSSH2(atLeast: [1, 11]) {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("-etm@openssh.com") || result.stderr.contains("-gcm@openssh.com"), "\(result.stderr)")
            return
        }
        #expect(result.status != 0, "\(result.stderr)")
        let said = result.stderr
        #expect(said.contains("have no algorithm in common. Its MACs (hmac-sha2-256-etm@openssh.com"), "\(said)")
        #expect(said.contains("cannot speak (they came in libssh2 1.11.0)") && said.contains("octunnel built on libssh2 1.11 or newer"), "\(said)")
        #expect(said.contains("add hmac-sha2-256 to the server's MACs"), "\(said)")
        for offered in ["ssh-ed25519 or ECDSA", "curve25519/ECDH", "aes-ctr ciphers", "key exchange algorithms", "Its ciphers", "host key algorithms"] {
            #expect(!said.contains(offered), "names something the server offers: \(offered): \(said)")
        }
        #expect(fixture.sshd.log.contains("no matching MAC found"), "\(fixture.sshd.log.suffix(800))")
    }

    @Test("a VPS that allows only chacha20-poly1305: tunnel check passes on libssh2 1.11.1 and negotiates it; on 1.10 the message names the ciphers and libssh2 1.11.1")
    func chachaOnly() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture(sshdConfig: Self.config.replacingOccurrences(
            of: "Ciphers chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-gcm@openssh.com,aes256-ctr,aes192-ctr,aes128-ctr",
            with: "Ciphers chacha20-poly1305@openssh.com"))
        let result = try fixture.run(["tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10"])
        if octunnelRunsOnLibSSH2(atLeast: [1, 11, 1]) {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("chacha20-poly1305@openssh.com"), "\(result.stderr)")
            return
        }
        #expect(result.status != 0, "\(result.stderr)")
        let said = result.stderr
        #expect(said.contains("Its ciphers (chacha20-poly1305@openssh.com) are all AEAD ciphers"), "\(said)")
        #expect(said.contains("chacha20-poly1305 in 1.11.1") && said.contains("octunnel built on libssh2 1.11.1 or newer"), "\(said)")
        #expect(said.contains("add aes256-ctr to the server's Ciphers"), "\(said)")
        #expect(!said.contains("Its MACs"), "the MACs do not count when every cipher carries its own: \(said)")
    }
}
