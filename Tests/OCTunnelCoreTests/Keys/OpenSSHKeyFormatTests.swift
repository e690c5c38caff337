import Foundation
import OCTunnelTestSupport
import OCTunnelCore
import Testing

@Suite("Ed25519 keys in OpenSSH format", .ownThreads)
struct OpenSSHKeyFormatTests {
    @Test func encodeThenDecodeGivesBackTheSameKeyAndComment() throws {
        let pair = try Ed25519KeyPair.generate()
        let text = OpenSSHPrivateKey.encode(pair, comment: "me@laptop", checkValue: 0xDEAD_BEEF)

        let decoded = try OpenSSHPrivateKey.decode(text)

        #expect(decoded.pair == pair)
        #expect(decoded.comment == "me@laptop")
        #expect(decoded.publicKey == SSHPublicKey(ed25519: pair.publicKey, comment: "me@laptop"))
        #expect(text.hasPrefix("-----BEGIN OPENSSH PRIVATE KEY-----\n"))
        #expect(text.hasSuffix("\n-----END OPENSSH PRIVATE KEY-----\n"))
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 70 })
        #expect(OpenSSHPrivateKey.encode(pair, comment: "me@laptop", checkValue: 0xDEAD_BEEF) == text)
    }

    @Test func fiftyGeneratedKeysAreDistinctAndAllRoundTrip() throws {
        var publicKeys = Set<[UInt8]>()
        var seeds = Set<[UInt8]>()
        for index in 0..<50 {
            let pair = try Ed25519KeyPair.generate()
            #expect(pair.seed.count == 32)
            #expect(pair.publicKey.count == 32)
            #expect(try Ed25519KeyPair.fromSeed(pair.seed) == pair)
            let decoded = try OpenSSHPrivateKey.decode(
                OpenSSHPrivateKey.encode(pair, comment: "key \(index)", checkValue: UInt32(index)))
            #expect(decoded.pair == pair)
            #expect(decoded.comment == "key \(index)")
            publicKeys.insert(pair.publicKey)
            seeds.insert(pair.seed)
        }
        #expect(publicKeys.count == 50)
        #expect(seeds.count == 50)
    }

    @Test func publicLineAndFingerprintHaveOpenSSHShape() throws {
        let key = SSHPublicKey(ed25519: try Ed25519KeyPair.generate().publicKey, comment: "c")
        let parsed = try #require(SSHPublicKey.parse(line: key.line))
        #expect(parsed == key)
        #expect(key.line.hasPrefix("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"))
        #expect(Fingerprint.isValid(key.fingerprint))
        #expect(!Fingerprint.isValid("SHA256:short"))
        #expect(!Fingerprint.isValid("MD5:" + String(repeating: "a", count: 43)))
    }

    @Test func sshKeygenDerivesOurPublicLineFromOurPrivateKey() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/home"))
            let made = try store.generate(comment: "interop@test", rotate: false)

            let derived = try sshKeygen(["-y", "-f", store.privateKeyPath]).stdout
            let derivedTypeAndKey = derived.split(separator: " ").prefix(2).joined(separator: " ")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let ourTypeAndKey = made.publicKey.line.split(separator: " ").prefix(2).joined(separator: " ")

            #expect(derivedTypeAndKey == ourTypeAndKey)
        }
    }

    @Test func sshKeygenShowsOurFingerprint() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/home"))
            let made = try store.generate(comment: "interop@test", rotate: false)

            for file in [store.privateKeyPath, store.publicKeyPath] {
                let listed = try sshKeygen(["-l", "-E", "sha256", "-f", file]).stdout
                let fields = listed.split(separator: " ")
                #expect(fields.count >= 2)
                #expect(fields.dropFirst().first.map(String.init) == made.publicKey.fingerprint, "\(file): \(listed)")
            }
        }
    }

    @Test func aKeyMadeBySshKeygenLoadsWithTheSamePublicKey() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/F"
            try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-f", path, "-C", "c"])

            let loaded = try KeyStore(directory: OctunnelDirectory(path: dir)).loadPrivateKey(at: path)

            let pubLine = try readText(path + ".pub").trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(loaded.decoded.publicKey.line == pubLine)
            #expect(loaded.decoded.comment == "c")
            #expect(loaded.raw == (try readBytes(path)))
        }
    }

    /// Private key files octunnel must refuse with exit 65, leaving them as they are.
    enum UnusableKeyFile: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case rsa, passphraseProtected, truncated, randomBytes, empty, pkcs8PEM, publicKeyInstead

        var testDescription: String { rawValue }

        /// A fragment the error must contain, naming what is wrong.
        var reasonMentions: String {
            switch self {
            case .rsa: return "ssh-rsa"
            case .passphraseProtected: return "passphrase"
            case .truncated: return "truncated"
            case .randomBytes: return "cannot use key file"
            case .empty: return "empty"
            case .pkcs8PEM: return "PEM"
            case .publicKeyInstead: return "public key"
            }
        }

        func make(at path: String) throws {
            switch self {
            case .rsa:
                try sshKeygen(["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", path])
            case .passphraseProtected:
                try sshKeygen(["-q", "-t", "ed25519", "-N", "secret", "-f", path])
            case .truncated:
                let whole = Array(
                    OpenSSHPrivateKey.encode(try Ed25519KeyPair.generate(), comment: "c", checkValue: 7).utf8)
                try writeBytes(Array(whole.prefix(whole.count / 2)), to: path)
            case .randomBytes:
                var generator = SystemRandomNumberGenerator()
                try writeBytes((0..<1024).map { _ in UInt8.random(in: 0...255, using: &generator) }, to: path)
            case .empty:
                try writeBytes([], to: path)
            case .pkcs8PEM:
                let result = try run("/usr/bin/openssl", ["genpkey", "-algorithm", "ed25519", "-out", path])
                try #require(result.status == 0, "openssl genpkey: \(result.stderr)")
            case .publicKeyInstead:
                let key = SSHPublicKey(ed25519: try Ed25519KeyPair.generate().publicKey, comment: "c")
                try writeText(key.line + "\n", to: path)
            }
            try setMode(0o600, of: path)
        }
    }

    @Test(arguments: UnusableKeyFile.allCases)
    func unusableKeyFilesAreRefusedWithExit65AndLeftUnchanged(_ kind: UnusableKeyFile) throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/id_ed25519"
            try kind.make(at: path)
            let before = try readBytes(path)

            let error = #expect(throws: KeyError.self) {
                try KeyStore(directory: OctunnelDirectory(path: dir)).loadPrivateKey(at: path)
            }

            guard case .badKeyFile(let reportedPath, let reason)? = error else {
                Issue.record("expected .badKeyFile, got \(String(describing: error))")
                return
            }
            #expect(reportedPath == path)
            #expect(error?.exitStatus == .dataError)
            #expect(error?.exitStatus.rawValue == 65)
            let message = error?.errorDescription ?? ""
            #expect(message.contains(kind.reasonMentions), "\(message)")
            #expect(message.contains(path))
            #expect(!reason.contains("FILE"), "the placeholder FILE should name the real path: \(reason)")
            #expect(try readBytes(path) == before)
        }
    }

    @Test func aKeyOthersCanReadIsRefusedWithExit77AndTheChmodToRun() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/home"))
            _ = try store.generate(comment: "c", rotate: false)
            try setMode(0o644, of: store.privateKeyPath)
            let before = try readBytes(store.privateKeyPath)

            #expect(throws: KeyError.unsafeKeyPermissions(path: store.privateKeyPath, mode: 0o644)) {
                try store.loadPrivateKey()
            }
            let error = KeyError.unsafeKeyPermissions(path: store.privateKeyPath, mode: 0o644)
            #expect(error.exitStatus.rawValue == 77)
            #expect(error.errorDescription?.contains("chmod 600 \(store.privateKeyPath)") == true)
            #expect(error.errorDescription?.contains("644") == true)
            #expect(try readBytes(store.privateKeyPath) == before)
            #expect(try mode(of: store.privateKeyPath) == 0o644)
        }
    }

    @Test func aMissingKeyIsNoKeyWithExit66() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir))

            #expect(throws: KeyError.noKey(path: store.privateKeyPath)) { try store.loadPrivateKey() }
            #expect(throws: KeyError.noKey(path: store.privateKeyPath)) { try store.publicKey() }
            #expect(KeyError.noKey(path: store.privateKeyPath).exitStatus.rawValue == 66)
            #expect(KeyError.noKey(path: store.privateKeyPath).errorDescription?.contains("octunnel keygen") == true)
            #expect(!fileExists(store.privateKeyPath))
        }
    }

    // Found by scripts/fuzz.sh (FuzzPrivateKey): a key whose comment starts with a combining mark
    // (U+06DF) gave a public line our own parser could not read, the mark fusing with the space.
    @Test func aCommentStartingWithACombiningMarkGivesAPublicLineThatParses() throws {
        let comment = String(
            decoding: [0xDB, 0x9F, 0x65, 0x87, 0x40, 0x66, 0x75, 0x80, 0x7A] as [UInt8], as: UTF8.self)
        let pair = try Ed25519KeyPair.generate()
        let decoded = try OpenSSHPrivateKey.decode(OpenSSHPrivateKey.encode(pair, comment: comment, checkValue: 1))

        #expect(decoded.comment == comment)
        #expect(SSHPublicKey.parse(line: decoded.publicKey.line) == decoded.publicKey)
    }
}
