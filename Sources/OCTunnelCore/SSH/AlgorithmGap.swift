import CLibSSH2

/// Why a handshake found nothing in common, list by list: the server's offer (from its KEXINIT)
/// against what octunnel asks for and this libssh2 can speak. Only the lists that do not meet
/// are named, and never an algorithm the server already offers as missing (issue 26).
struct AlgorithmGap: Equatable {
    enum List: String, CaseIterable {
        case hostKey = "host key algorithms", keyExchange = "key exchange algorithms", cipher = "ciphers", mac = "MACs"

        /// The sshd_config keyword that sets it.
        var keyword: String {
            switch self {
            case .hostKey: return "HostKeyAlgorithms (and a HostKey of that type)"
            case .keyExchange: return "KexAlgorithms"
            case .cipher: return "Ciphers"
            case .mac: return "MACs"
            }
        }
    }

    let list: List
    let offered: [String]
    let spoken: [String]

    /// The lists whose offer and spoken names share none. A cipher list of AEAD ciphers only
    /// (AES-GCM, chacha20-poly1305) carries its own MAC: the MAC list does not count then.
    static func gaps(offered: [List: [String]], spoken: [List: [String]]) -> [AlgorithmGap] {
        var gaps: [AlgorithmGap] = []
        let ciphers = offered[.cipher] ?? []
        let aeadOnly = !ciphers.isEmpty && ciphers.allSatisfy(isAEAD)
        for list in List.allCases where !(list == .mac && aeadOnly) {
            let theirs = offered[list] ?? []
            let ours = spoken[list] ?? []
            if Set(theirs).isDisjoint(with: ours) {
                gaps.append(AlgorithmGap(list: list, offered: theirs, spoken: ours))
            }
        }
        return gaps
    }

    /// A cipher that carries its own MAC (AES-GCM, chacha20-poly1305): with it the MACs are not negotiated.
    static func isAEAD(_ cipher: String) -> Bool {
        cipher.hasSuffix("-gcm@openssh.com") || cipher.hasPrefix("chacha20-poly1305")
    }

    /// One sentence per gap and the ways out, best first; `libssh2` is the running version.
    static func explain(_ gaps: [AlgorithmGap], libssh2: String) -> String {
        gaps.map { $0.explanation(libssh2: libssh2) }.joined(separator: " ")
    }

    /// The first way out: a newer library (Debian 13 ships libssh2 1.11.1; octunnel builds there unchanged).
    private static let newerLibrary = "octunnel built on libssh2 1.11 or newer (Debian 13 and Ubuntu 24.04 ship it)"

    func explanation(libssh2: String) -> String {
        let theirs = offered.joined(separator: ", ")
        let ours = spoken.joined(separator: ", ")
        let onOld = libssh2.hasPrefix("1.10") || libssh2.hasPrefix("1.9") || libssh2.hasPrefix("1.8")
        if list == .mac, !offered.isEmpty, offered.allSatisfy({ $0.hasSuffix("-etm@openssh.com") }), onOld {
            return
                "Its MACs (\(theirs)) are all encrypt-then-MAC (-etm@openssh.com), which libssh2 \(libssh2), the library this octunnel "
                + "runs on, cannot speak (they came in libssh2 1.11.0). Ways out, best first: \(Self.newerLibrary); "
                + "only as a last resort, add hmac-sha2-256 to the server's MACs in sshd_config, which costs the hardening: "
                + "its MAC is over the plaintext (encrypt-and-MAC), checked only after decrypting."
        }
        if list == .cipher, !offered.isEmpty, offered.allSatisfy(Self.isAEAD),
            onOld || libssh2.hasPrefix("1.11.0")
        {
            // AES-GCM came in libssh2 1.11.0, chacha20-poly1305 in 1.11.1 (Ubuntu 24.04 has 1.11.0).
            let gcm = offered.contains { $0.hasSuffix("-gcm@openssh.com") }
            let library = gcm ? Self.newerLibrary : "octunnel built on libssh2 1.11.1 or newer (Debian 13 ships it)"
            return "Its ciphers (\(theirs)) are all AEAD ciphers, which libssh2 \(libssh2) cannot speak "
                + "(AES-GCM came in libssh2 1.11.0, chacha20-poly1305 in 1.11.1). "
                + "Ways out, best first: \(library); only as a last resort, "
                + "add \(onOld ? "aes256-ctr" : "aes256-gcm@openssh.com") to the server's Ciphers."
        }
        return
            "Its \(list.rawValue) (\(theirs.isEmpty ? "none" : theirs)) and the ones octunnel speaks on libssh2 \(libssh2) (\(ours)) "
            + "have none in common: allow one of octunnel's in the server's \(list.keyword)"
            + (onOld ? ", or use \(Self.newerLibrary)." : ".")
    }
}

extension LibSSH2 {
    /// The running libssh2's version (`libssh2_version(0)`), e.g. "1.10.0".
    static var runningVersion: String {
        libssh2_version(0).map { String(cString: $0) } ?? "unknown"
    }

    /// What the running libssh2 can speak of `method` (`libssh2_session_supported_algs` on a
    /// session made for the question).
    static func supported(_ method: Int32) -> [String] {
        ensureInitialized()
        guard let session = libssh2_session_init_ex(nil, nil, nil, nil) else { return [] }
        defer { libssh2_session_free(session) }
        return supported(method, on: session)
    }

    /// `libssh2_session_supported_algs` on `session`: what it can speak of `method`.
    static func supported(_ method: Int32, on session: OpaquePointer) -> [String] {
        var algorithms: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        let count = libssh2_session_supported_algs(session, method, &algorithms)
        guard count > 0, let algorithms else { return [] }
        defer { libssh2_free(session, algorithms) }
        return (0..<Int(count)).compactMap { algorithms[$0].map { String(cString: $0) } }
    }
}
