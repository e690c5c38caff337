@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A failed handshake names only the algorithm lists that do not meet, and never an algorithm
/// the server already offers as missing (issue 26).
@Suite("the handshake's algorithm gaps", .ownThreads)
struct AlgorithmGapTests {
    /// What ssh-audit's hardening guides leave on a VPS.
    static let hardened: [AlgorithmGap.List: [String]] = [
        .hostKey: ["ssh-ed25519"],
        .keyExchange: ["sntrup761x25519-sha512@openssh.com", "curve25519-sha256", "curve25519-sha256@libssh.org"],
        .cipher: [
            "chacha20-poly1305@openssh.com", "aes256-gcm@openssh.com", "aes128-gcm@openssh.com", "aes256-ctr",
            "aes192-ctr", "aes128-ctr",
        ],
        .mac: ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com", "umac-128-etm@openssh.com"],
    ]
    /// What octunnel speaks on Debian 12's libssh2 1.10.0.
    static let on110: [AlgorithmGap.List: [String]] = [
        .hostKey: ["ssh-ed25519", "ecdsa-sha2-nistp256"],
        .keyExchange: ["curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256"],
        .cipher: ["aes128-ctr", "aes256-ctr", "aes192-ctr"],
        .mac: ["hmac-sha2-256", "hmac-sha2-512"],
    ]
    /// What it speaks on libssh2 1.11.0: 1.10.0's, with AES-GCM and the ETM MACs first.
    static var on1110: [AlgorithmGap.List: [String]] {
        var spoken = on110
        spoken[.cipher] = ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com"] + spoken[.cipher]!
        spoken[.mac] = ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com"] + spoken[.mac]!
        return spoken
    }

    /// The hardened VPS with `list` offering only `names` and a MAC 1.10.0 speaks, so that `list`
    /// alone can fail to meet.
    static func hardened(only list: AlgorithmGap.List, _ names: [String]) -> [AlgorithmGap.List: [String]] {
        var offered = hardened
        offered[list] = names
        offered[.mac] = ["hmac-sha2-256"]
        return offered
    }

    @Test(
        "a hardened VPS on libssh2 1.10: only the MACs are named, with the ways out in order, and nothing the server offers is called missing"
    )
    func hardenedOn110() {
        let gaps = AlgorithmGap.gaps(offered: Self.hardened, spoken: Self.on110)
        #expect(gaps.map(\.list) == [.mac])
        let text = AlgorithmGap.explain(gaps, libssh2: "1.10.0")
        #expect(
            text.hasPrefix(
                "Its MACs (hmac-sha2-256-etm@openssh.com, hmac-sha2-512-etm@openssh.com, umac-128-etm@openssh.com) are all encrypt-then-MAC"
            ))
        #expect(
            text.contains(
                "libssh2 1.10.0, the library this octunnel runs on, cannot speak (they came in libssh2 1.11.0)"))
        let newer = try! #require(text.range(of: "octunnel built on libssh2 1.11 or newer"))
        let lastResort = try! #require(text.range(of: "add hmac-sha2-256 to the server's MACs"))
        #expect(newer.lowerBound < lastResort.lowerBound, "the newer library comes first, weakening the server last")
        for offered in ["ssh-ed25519", "curve25519-sha256", "aes256-ctr", "chacha20"] {
            #expect(!text.contains(offered), "\(offered) is offered by the server and must not be named: \(text)")
        }
    }

    @Test("the same VPS on libssh2 1.11 (ETM MACs and AES-GCM spoken): no gap")
    func hardenedOn111() {
        #expect(AlgorithmGap.gaps(offered: Self.hardened, spoken: Self.on1110).isEmpty)
    }

    @Test(
        "each other list is named alone when it alone does not meet: host key, key exchange, an AEAD-only cipher list")
    func otherLists() {
        let rsaOnly = Self.hardened(only: .hostKey, ["rsa-sha2-512", "rsa-sha2-256"])
        let hostKey = AlgorithmGap.gaps(offered: rsaOnly, spoken: Self.on110)
        #expect(hostKey.map(\.list) == [.hostKey])
        let hostKeyText = AlgorithmGap.explain(hostKey, libssh2: "1.10.0")
        #expect(
            hostKeyText.contains("Its host key algorithms (rsa-sha2-512, rsa-sha2-256)")
                && hostKeyText.contains("HostKeyAlgorithms"))

        let pqOnly = Self.hardened(only: .keyExchange, ["mlkem768x25519-sha256", "sntrup761x25519-sha512@openssh.com"])
        #expect(AlgorithmGap.gaps(offered: pqOnly, spoken: Self.on110).map(\.list) == [.keyExchange])

        let gcmOnly = Self.hardened(only: .cipher, ["aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com"])
        let cipher = AlgorithmGap.gaps(offered: gcmOnly, spoken: Self.on110)
        #expect(cipher.map(\.list) == [.cipher])
        let cipherText = AlgorithmGap.explain(cipher, libssh2: "1.10.0")
        #expect(cipherText.contains("all AEAD ciphers") && cipherText.contains("AES-GCM came in libssh2 1.11.0"))
        #expect(!cipherText.contains("aes128-ctr"), "\(cipherText)")
    }

    @Test(
        "a chacha20-poly1305-only VPS: spoken on libssh2 1.11.1; on 1.11.0 and 1.10 the ciphers are named with 1.11.1 as the way out"
    )
    func chachaOnly() {
        var chachaOnly = Self.hardened
        chachaOnly[.cipher] = ["chacha20-poly1305@openssh.com"]
        let on1110 = Self.on1110
        var on1111 = on1110
        on1111[.cipher] =
            ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com"] + Self.on110[.cipher]!
        #expect(AlgorithmGap.gaps(offered: chachaOnly, spoken: on1111).isEmpty)
        for (spoken, version) in [(on1110, "1.11.0"), (Self.on110, "1.10.0")] {
            let gaps = AlgorithmGap.gaps(offered: chachaOnly, spoken: spoken)
            #expect(gaps.map(\.list) == [.cipher], "\(version)")
            let text = AlgorithmGap.explain(gaps, libssh2: version)
            #expect(
                text.contains("chacha20-poly1305 in 1.11.1")
                    && text.contains("octunnel built on libssh2 1.11.1 or newer (Debian 13 ships it)"), "\(text)")
            let lastResort = version == "1.10.0" ? "aes256-ctr" : "aes256-gcm@openssh.com"
            #expect(text.contains("add \(lastResort) to the server's Ciphers") && !text.contains("Ubuntu"), "\(text)")
        }
    }

    @Test("the running libssh2 speaks every name octunnel asks for first on its version, and --version's library is it")
    func spokenOnThisMachine() {
        let version = LibSSH2.runningVersion
        #expect(SSHAlgorithms.spoken(.cipher).contains("aes128-ctr"))
        #expect(SSHAlgorithms.spoken(.mac).contains("hmac-sha2-256"))
        if version.hasPrefix("1.10") {
            #expect(!SSHAlgorithms.spoken(.mac).contains { $0.hasSuffix("-etm@openssh.com") })
        } else {
            #expect(SSHAlgorithms.spoken(.mac).first == "hmac-sha2-256-etm@openssh.com")
            #expect(SSHAlgorithms.spoken(.cipher).first == "aes128-gcm@openssh.com")
        }
        #expect(OCTunnelVersion.described == "\(OCTunnelVersion.current) (libssh2 \(version))")
    }

    @Test(
        "every name octunnel hands libssh2_session_method_pref is one the running libssh2 speaks, in octunnel's order: libssh2 1.10.0 drops an unknown one with an overlapping memcpy (AddressSanitizer: memcpy-param-overlap on every session)"
    )
    func preferencesHoldOnlySpokenNames() {
        let preferences = SSHAlgorithms.preferences(speaking: LibSSH2.supported)
        #expect(preferences.count == 6, "key exchange, host keys, ciphers and MACs both ways")
        for (method, list) in preferences {
            let spoken = Set(LibSSH2.supported(method))
            let names = list.split(separator: ",").map(String.init)
            #expect(!names.isEmpty, "method \(method): nothing left to offer")
            #expect(
                names.allSatisfy(spoken.contains),
                "method \(method): \(names.filter { !spoken.contains($0) }) unknown to libssh2 \(LibSSH2.runningVersion)"
            )
        }
        // A library that speaks only some CTR ciphers and hmac-sha2 MACs: octunnel's order kept,
        // every other name left out (key exchange, host keys, ciphers and MACs both ways).
        let old = SSHAlgorithms.preferences { _ in
            ["hmac-sha2-512", "aes256-ctr", "hmac-sha2-256", "aes128-ctr", "3des-cbc"]
        }
        #expect(
            old.map(\.list) == [
                "", "", "aes128-ctr,aes256-ctr", "aes128-ctr,aes256-ctr",
                "hmac-sha2-256,hmac-sha2-512", "hmac-sha2-256,hmac-sha2-512",
            ])
    }
}
