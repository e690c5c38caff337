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

    /// `tunnel check` once against an sshd with `sshdConfig` added, OpenCode's stand-in behind it.
    /// On a libssh2 of at least `version` (the binary's, not the host's: the Debian 13 leg runs one
    /// built there) it must pass and name one of `negotiated`, and `said` is nil; below, it must
    /// fail, and `said` is its stderr.
    static func check(
        sshdConfig: String, passesFrom version: [Int], naming negotiated: [String]
    ) throws -> (said: String?, fixture: TunnelFixture) {
        let backend = try OpenCodeStandIn()
        let fixture = try TunnelFixture(sshdConfig: sshdConfig)
        let result = try fixture.run([
            "tunnel", "check", fixture.target, "--remote-port", String(backend.port), "--connect-timeout", "10",
        ])
        if octunnelRunsOnLibSSH2(atLeast: version) {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(negotiated.contains { result.stderr.contains($0) }, "\(result.stderr)")
            return (nil, fixture)
        }
        #expect(result.status != 0, "\(result.stderr)")
        return (result.stderr, fixture)
    }

    @Test(
        "tunnel check against the hardened config: all layers pass on libssh2 1.11; on 1.10 the message names the MACs and the fix, nothing else"
    )
    func hardenedConfig() throws {
        let (failure, fixture) = try Self.check(
            sshdConfig: Self.config, passesFrom: [1, 11], naming: ["-etm@openssh.com", "-gcm@openssh.com"])
        guard let said = failure else { return }
        #expect(said.contains("have no algorithm in common. Its MACs (hmac-sha2-256-etm@openssh.com"), "\(said)")
        #expect(
            said.contains("cannot speak (they came in libssh2 1.11.0)")
                && said.contains("octunnel built on libssh2 1.11 or newer"), "\(said)")
        #expect(said.contains("add hmac-sha2-256 to the server's MACs"), "\(said)")
        for offered in [
            "ssh-ed25519 or ECDSA", "curve25519/ECDH", "aes-ctr ciphers", "key exchange algorithms", "Its ciphers",
            "host key algorithms",
        ] {
            #expect(!said.contains(offered), "names something the server offers: \(offered): \(said)")
        }
        #expect(fixture.sshd.log.contains("no matching MAC found"), "\(fixture.sshd.log.suffix(800))")
    }

    @Test(
        "a VPS that allows only chacha20-poly1305: tunnel check passes on libssh2 1.11.1 and negotiates it; on 1.10 the message names the ciphers and libssh2 1.11.1"
    )
    func chachaOnly() throws {
        let chachaOnly = Self.config.replacingOccurrences(
            of:
                "Ciphers chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-gcm@openssh.com,aes256-ctr,aes192-ctr,aes128-ctr",
            with: "Ciphers chacha20-poly1305@openssh.com")
        guard
            let said = try Self.check(
                sshdConfig: chachaOnly, passesFrom: [1, 11, 1], naming: ["chacha20-poly1305@openssh.com"]
            ).said
        else { return }
        #expect(said.contains("Its ciphers (chacha20-poly1305@openssh.com) are all AEAD ciphers"), "\(said)")
        #expect(
            said.contains("chacha20-poly1305 in 1.11.1") && said.contains("octunnel built on libssh2 1.11.1 or newer"),
            "\(said)")
        #expect(said.contains("add aes256-ctr to the server's Ciphers"), "\(said)")
        #expect(!said.contains("Its MACs"), "the MACs do not count when every cipher carries its own: \(said)")
    }
}
