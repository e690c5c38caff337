import Foundation
import OCTunnelTestSupport
import OCTunnelCore
import Testing

/// A fresh Ed25519 public key with no comment, as a server would present it.
func newHostKey() throws -> SSHPublicKey {
    SSHPublicKey(ed25519: try Ed25519KeyPair.generate().publicKey, comment: "")
}

/// A host key of any type, made by the real ssh-keygen in `dir`.
func sshKeygenHostKey(type: String, in dir: String) throws -> SSHPublicKey {
    let path = dir + "/host_\(type)_\(UInt32.random(in: 0...UInt32.max))"
    try sshKeygen(["-q", "-t", type, "-N", "", "-C", "", "-f", path])
    let parsed = try #require(SSHPublicKey.parse(line: try readText(path + ".pub")))
    return SSHPublicKey(type: parsed.type, blob: parsed.blob)
}

/// `name type base64`, the way ssh-keyscan prints an entry.
func knownHostsLine(_ name: String, _ key: SSHPublicKey) -> String {
    "\(name) \(key.type) \(Data(key.blob).base64EncodedString())"
}

/// A known_hosts store in `dir` holding `text(key)` for a fresh host key, and that key.
private func knownHosts(in dir: String, _ text: (SSHPublicKey) -> String) throws -> (KnownHostsStore, SSHPublicKey) {
    let store = KnownHostsStore(path: dir + "/known_hosts")
    let key = try newHostKey()
    try writeText(text(key), to: store.path)
    return (store, key)
}

/// The store's verdict at each host and port on a fresh key whose one line names `hosts`.
private func verdicts(
    trusting hosts: String, at places: [HostPort]
) throws -> [KnownHostsStore.Verdict] {
    try withTemporaryDirectory { dir in
        let (store, key) = try knownHosts(in: dir) { knownHostsLine(hosts, $0) + "\n" }
        return try places.map { try store.verdict(host: $0.host, port: $0.port, key: key) }
    }
}

/// One known_hosts line's host list and the verdict expected at each host and port.
struct TrustCase: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let hosts: String
    let places: [HostPort]
    let expected: [KnownHostsStore.Verdict]

    init(_ what: String, trusting hosts: String, at places: [(String, Int)], _ expected: [KnownHostsStore.Verdict]) {
        testDescription = what
        self.hosts = hosts
        self.places = places.map { HostPort(host: $0.0, port: $0.1) }
        self.expected = expected
    }
}

@Suite("Known hosts: recording and strict host:port trust", .ownThreads)
struct KnownHostsTrustTests {
    @Test func recordWritesABracketedEntryThatSshKeygenFinds() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            let key = SSHPublicKey(
                ed25519: try Ed25519KeyPair.generate().publicKey, comment: "a comment is not recorded")

            try store.record(host: "127.0.0.1", port: 2222, key: key)

            let expected = "[127.0.0.1]:2222 ssh-ed25519 \(Data(key.blob).base64EncodedString())\n"
            #expect(try readText(store.path) == expected)
            #expect(expected.hasPrefix("[127.0.0.1]:2222 ssh-ed25519 AAAA"))
            #expect(try mode(of: store.path) == 0o600)
            let found = try run(sshKeygenPath, ["-F", "[127.0.0.1]:2222", "-f", store.path])
            #expect(found.status == 0, "\(found.stderr)")
            #expect(found.stdout.contains(expected))
            let otherPort = try run(sshKeygenPath, ["-F", "127.0.0.1", "-f", store.path])
            #expect(otherPort.status != 0, "port 22 must not find the 2222 entry: \(otherPort.stdout)")
        }
    }

    @Test func port22IsWrittenBare() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            let key = try newHostKey()

            try store.record(host: "VPS.example.com", port: 22, key: key)

            #expect(try readText(store.path) == knownHostsLine("vps.example.com", key) + "\n")
            let found = try run(sshKeygenPath, ["-F", "vps.example.com", "-f", store.path])
            #expect(found.status == 0)
        }
    }

    @Test func recordingTheSameKeyTwiceWritesOneLine() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            let key = try newHostKey()
            try store.record(host: "vps", port: 2222, key: key)
            let once = try readBytes(store.path)

            try store.record(host: "vps", port: 2222, key: key)

            #expect(try readBytes(store.path) == once)
        }
    }

    @Test func recordRefusesASecondKeyForAKnownHost() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            try store.record(host: "vps", port: 2222, key: try newHostKey())
            let before = try readBytes(store.path)

            let error = #expect(throws: LocalFileError.self) {
                try store.record(host: "vps", port: 2222, key: try newHostKey())
            }

            #expect(error?.exitStatus.rawValue == 73)
            #expect(try readBytes(store.path) == before)
        }
    }

    @Test func anAbsentFileKnowsNothingAndIsNotCreatedByLookups() throws {
        try withTemporaryDirectory { dir throws in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            #expect(try store.verdict(host: "vps", port: 22, key: try newHostKey()) == .unknown)
            #expect(try store.load().lines.isEmpty)
            #expect(!fileExists(store.path))
        }
    }

    @Test(arguments: [
        TrustCase(
            "trust is strictly per port", trusting: "vps.example.com",
            at: [("vps.example.com", 22), ("vps.example.com", 2222), ("other.example.com", 22)],
            [.trusted, .unknown, .unknown]),
        TrustCase(
            "every name in a host list matches", trusting: "vps,1.2.3.4,[vps]:2222",
            at: [("vps", 22), ("1.2.3.4", 22), ("vps", 2222), ("1.2.3.4", 2222), ("vp", 22)],
            [.trusted, .trusted, .trusted, .unknown, .unknown]),
        TrustCase(
            "wildcards match and negations exclude", trusting: "*.example.com,!bad.example.com",
            at: [("vps.example.com", 22), ("bad.example.com", 22), ("example.com", 22)],
            [.trusted, .unknown, .unknown]),
    ])
    func verdictsOfOneLine(_ trust: TrustCase) throws {
        #expect(
            try verdicts(trusting: trust.hosts, at: trust.places) == trust.expected)
    }

    @Test func aDifferentKeyOfTheSameTypeIsChanged() throws {
        try withTemporaryDirectory { dir in
            let (store, known) = try knownHosts(in: dir) { knownHostsLine("[127.0.0.1]:2222", $0) + "\n" }

            let presented = try newHostKey()
            #expect(
                try store.verdict(host: "127.0.0.1", port: 2222, key: presented) == .changed(known: [known.fingerprint])
            )
        }
    }

    @Test func anEntryOfAnotherKeyTypeIsChangedNotUnknown() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            let ecdsa = try sshKeygenHostKey(type: "ecdsa", in: dir)
            try writeText(knownHostsLine("[127.0.0.1]:2222", ecdsa) + "\n", to: store.path)

            let presented = try newHostKey()
            #expect(ecdsa.type == "ecdsa-sha2-nistp256")
            #expect(
                try store.verdict(host: "127.0.0.1", port: 2222, key: presented) == .changed(known: [ecdsa.fingerprint])
            )
            #expect(try store.verdict(host: "127.0.0.1", port: 2222, key: ecdsa) == .trusted)
        }
    }

    @Test func hashedEntriesMatchOnlyTheirHostAndPort() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            let key = try newHostKey()
            let salt: [UInt8] = (0..<20).map { UInt8($0 &* 13 &+ 7) }
            let hashed = HashedHostName.hash("[127.0.0.1]:2222", salt: salt)
            try writeText(knownHostsLine(hashed, key) + "\n", to: store.path)

            #expect(hashed.hasPrefix("|1|"))
            #expect(HashedHostName.matches(hashed, name: "[127.0.0.1]:2222"))
            #expect(!HashedHostName.matches(hashed, name: "127.0.0.1"))
            #expect(try store.verdict(host: "127.0.0.1", port: 2222, key: key) == .trusted)
            #expect(try store.verdict(host: "127.0.0.1", port: 22, key: key) == .unknown)
            #expect(
                try store.verdict(host: "127.0.0.1", port: 2222, key: try newHostKey())
                    == .changed(known: [key.fingerprint]))
            let found = try run(sshKeygenPath, ["-F", "[127.0.0.1]:2222", "-f", store.path])
            #expect(found.status == 0, "ssh-keygen should find our hashed name: \(found.stderr)")
        }
    }

    @Test func entriesHashedBySshKeygenMatch() throws {
        try withTemporaryDirectory { dir in
            let (store, key) = try knownHosts(in: dir) {
                knownHostsLine("[127.0.0.1]:2222", $0) + "\n" + knownHostsLine("vps", $0) + "\n"
            }

            try sshKeygen(["-H", "-f", store.path])

            let text = try readText(store.path)
            #expect(!text.contains("127.0.0.1"))
            #expect(!text.contains("vps"))
            #expect(try store.load().entries.count == 2)
            #expect(try store.load().entries.allSatisfy { $0.entry.isHashed })
            #expect(try store.verdict(host: "127.0.0.1", port: 2222, key: key) == .trusted)
            #expect(try store.verdict(host: "vps", port: 22, key: key) == .trusted)
            #expect(try store.verdict(host: "vps", port: 2222, key: key) == .unknown)
        }
    }

    @Test func aRevokedKeyIsRevokedEvenWhenAlsoTrusted() throws {
        try withTemporaryDirectory { dir in
            let (store, key) = try knownHosts(in: dir) {
                knownHostsLine("vps", $0) + "\n@revoked " + knownHostsLine("vps", $0) + "\n"
            }

            #expect(try store.verdict(host: "vps", port: 22, key: key) == .revoked)
        }
    }

    @Test func certAuthorityLinesAreNotHostKeys() throws {
        try withTemporaryDirectory { dir in
            let (store, ca) = try knownHosts(in: dir) {
                "@cert-authority " + knownHostsLine("vps,*.example.com", $0) + "\n"
            }

            #expect(try store.verdict(host: "vps", port: 22, key: try newHostKey()) == .unknown)
            #expect(try store.verdict(host: "vps", port: 22, key: ca) == .unknown)
            #expect(try store.verdict(host: "a.example.com", port: 22, key: try newHostKey()) == .unknown)
        }
    }

    /// The file real `ssh -o StrictHostKeyChecking=accept-new` writes with HashKnownHosts yes:
    /// ssh-keyscan lines for real host keys, hashed by ssh-keygen -H.
    @Test func aKnownHostsFileWrittenByOpenSSHIsRead() throws {
        try withTemporaryDirectory { dir in
            let keys = [
                try sshKeygenHostKey(type: "ed25519", in: dir),
                try sshKeygenHostKey(type: "ecdsa", in: dir),
                try sshKeygenHostKey(type: "rsa", in: dir),
            ]
            let plainText =
                keys.map { knownHostsLine("[127.0.0.1]:2222", $0) + "\n" }.joined()
                + keys.map { knownHostsLine("vps.example.com", $0) + "\n" }.joined()
            let plain = KnownHostsStore(path: dir + "/known_hosts.plain")
            let hashed = KnownHostsStore(path: dir + "/known_hosts")
            try writeText(plainText, to: plain.path)
            try writeText(plainText, to: hashed.path)
            try sshKeygen(["-H", "-f", hashed.path])
            #expect(try readText(hashed.path).split(separator: "\n").allSatisfy { $0.hasPrefix("|1|") })

            for store in [plain, hashed] {
                let file = try store.load()
                #expect(file.malformed.isEmpty, "\(store.path): \(file.malformed)")
                #expect(file.entries.count == 6)
                for key in keys {
                    #expect(
                        try store.verdict(host: "127.0.0.1", port: 2222, key: key) == .trusted,
                        "\(store.path) \(key.type)")
                    #expect(
                        try store.verdict(host: "vps.example.com", port: 22, key: key) == .trusted,
                        "\(store.path) \(key.type)")
                    #expect(try store.verdict(host: "127.0.0.1", port: 22, key: key) == .unknown)
                }
                let stranger = try newHostKey()
                guard case .changed(let known) = try store.verdict(host: "127.0.0.1", port: 2222, key: stranger) else {
                    Issue.record("a new key for a known host must be .changed")
                    continue
                }
                #expect(Set(known) == Set(keys.map(\.fingerprint)))
            }

            let removal = try hashed.remove(host: "127.0.0.1", port: 2222)
            #expect(removal.removed == 3)
            #expect(try run(sshKeygenPath, ["-F", "[127.0.0.1]:2222", "-f", hashed.path]).status != 0)
            #expect(try run(sshKeygenPath, ["-F", "vps.example.com", "-f", hashed.path]).status == 0)
            #expect(try hashed.load().entries.count == 3)
        }
    }

    @Test(arguments: [
        ("[127.0.0.1]:2222", "127.0.0.1:2222"),
        ("vps", "vps:22"),
        ("::1", "[::1]:22"),
        ("[::1]:2222", "[::1]:2222"),
        ("vps,[vps]:2222", "vps:22,vps:2222"),
    ])
    func entriesAreShownAsHostColonPort(hosts: String, shown: String) throws {
        let line = Array(knownHostsLine(hosts, try newHostKey()).utf8)
        let entry = try #require(KnownHostsFile(bytes: line).entries.first?.entry)
        #expect(entry.displayHosts == shown)
    }

    @Test func ourFingerprintsMatchSshKeygensForEveryKeyType() throws {
        try withTemporaryDirectory { dir in
            for type in ["ed25519", "ecdsa", "rsa"] {
                let path = dir + "/fp_\(type)"
                try sshKeygen(["-q", "-t", type, "-N", "", "-C", "", "-f", path])
                let key = try #require(SSHPublicKey.parse(line: try readText(path + ".pub")))
                let listed = try sshKeygen(["-l", "-E", "sha256", "-f", path + ".pub"]).stdout
                #expect(listed.split(separator: " ").dropFirst().first.map(String.init) == key.fingerprint, "\(type)")
            }
        }
    }
}
