import Foundation

/// OpenSSH's `openssh-key-v1` private key format (PROTOCOL.key), for unencrypted Ed25519 keys.
public enum OpenSSHPrivateKey {
    static let magic = Array("openssh-key-v1".utf8) + [0]
    static let begin = "-----BEGIN OPENSSH PRIVATE KEY-----"
    static let end = "-----END OPENSSH PRIVATE KEY-----"

    /// Encodes the pair and its comment as the armoured text `ssh-keygen` writes; with a
    /// passphrase, encrypted as `ssh-keygen -N` does (bcrypt KDF, 16 rounds, a 16-byte salt,
    /// aes256-ctr).
    public static func encode(_ pair: Ed25519KeyPair, comment: String, checkValue: UInt32) -> String {
        // An unencrypted key cannot fail.
        try! encode(pair, comment: comment, checkValue: checkValue, passphrase: nil)
    }

    /// The same, encrypting when `passphrase` is given (`salt` is random when nil).
    public static func encode(
        _ pair: Ed25519KeyPair, comment: String, checkValue: UInt32, passphrase: SecretBuffer?,
        rounds: Int = KeyEncryption.defaultRounds, salt: [UInt8]? = nil
    ) throws(OpenSSLError) -> String {
        let publicKey = SSHPublicKey(ed25519: pair.publicKey, comment: comment)
        var secret = SSHWireWriter()
        secret.uint32(checkValue)
        secret.uint32(checkValue)
        secret.string("ssh-ed25519")
        secret.string(pair.publicKey)
        secret.string(pair.seed + pair.publicKey)
        secret.string(comment)
        let blockSize = passphrase == nil ? 8 : KeyEncryption.blockSize
        var pad: UInt8 = 1
        while secret.bytes.count % blockSize != 0 {
            secret.raw([pad])
            pad += 1
        }
        var blob = SSHWireWriter()
        blob.raw(magic)
        var sealed = secret.bytes
        if let passphrase {
            let kdfSalt: [UInt8]
            if let salt { kdfSalt = salt } else { kdfSalt = try Crypto.randomBytes(16) }
            var options = SSHWireWriter()
            options.string(kdfSalt)
            options.uint32(UInt32(rounds))
            blob.string(KeyEncryption.cipher)
            blob.string(KeyEncryption.kdf)
            blob.string(options.bytes)
            let keyAndIV: SecretBuffer
            do {
                keyAndIV = try passphrase.withUnsafeBytes { bytes throws(BcryptPBKDF.Failure) in
                    try BcryptPBKDF.derive(passphrase: bytes, salt: kdfSalt, count: 48, rounds: rounds)
                }
            } catch {
                throw OpenSSLError("bcrypt_pbkdf: the passphrase is empty")
            }
            try KeyEncryption.crypt(&sealed, keyAndIV: keyAndIV)
        } else {
            blob.string("none")
            blob.string("none")
            blob.string("")
        }
        blob.uint32(1)
        blob.string(publicKey.blob)
        blob.string(sealed)
        BcryptPBKDF.wipe(&sealed)
        let base64 = Data(blob.bytes).base64EncodedString()
        var lines = [begin]
        var index = base64.startIndex
        while index < base64.endIndex {
            let next = base64.index(index, offsetBy: 70, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<next]))
            index = next
        }
        lines.append(end)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A decoded key: the pair and its comment.
    public struct Decoded: Sendable, Equatable {
        public let pair: Ed25519KeyPair
        public let comment: String
        public var publicKey: SSHPublicKey { SSHPublicKey(ed25519: pair.publicKey, comment: comment) }
    }

    /// Decodes an unencrypted armoured key, saying precisely what is wrong with anything it cannot use.
    public static func decode(_ text: String) throws(KeyFormatError) -> Decoded {
        do {
            return try decode(text, passphrase: nil)
        } catch .format(let error) {
            throw error
        } catch {
            throw .init("it is encrypted with a passphrase")
        }
    }

    /// Decodes an armoured key, decrypting it with `passphrase` when it is encrypted. A file
    /// asking for more than `maximumRounds` KDF rounds is refused before any round runs (the
    /// fuzz target lowers the bound to keep each input fast).
    public static func decode(
        _ text: String, passphrase: SecretBuffer?,
        maximumRounds: Int = KeyEncryption.maximumRounds
    ) throws(KeyUnlockError) -> Decoded {
        let container: Container
        do { container = try Container(text, maximumRounds: maximumRounds) } catch { throw .format(error) }
        var secret = container.secret
        defer { BcryptPBKDF.wipe(&secret) }
        if let encryption = container.encryption {
            guard let passphrase else { throw .needsPassphrase }
            guard passphrase.count > 0 else { throw .wrongPassphrase }
            do {
                let keyAndIV = try passphrase.withUnsafeBytes { bytes throws(BcryptPBKDF.Failure) in
                    try BcryptPBKDF.derive(
                        passphrase: bytes, salt: encryption.salt, count: 48, rounds: encryption.rounds)
                }
                try KeyEncryption.crypt(&secret, keyAndIV: keyAndIV)
            } catch {
                throw .format(KeyFormatError("it cannot be decrypted (\(error))"))
            }
        }
        do {
            return try decode(
                publicBlob: container.publicBlob, secret: secret,
                blockSize: container.encryption == nil ? 8 : KeyEncryption.blockSize)
        } catch let error as KeyFormatError {
            // Different check values after decryption are OpenSSH's sign of a wrong passphrase.
            if container.encryption != nil && error.reason.hasPrefix("its check values differ") {
                throw .wrongPassphrase
            }
            throw .format(error)
        } catch {
            throw .format(KeyFormatError("it is truncated or corrupt"))
        }
    }

    /// The public key stored in the clear in the file: readable without the passphrase.
    public static func publicKey(of text: String) throws(KeyFormatError) -> (key: SSHPublicKey, isEncrypted: Bool) {
        let container = try Container(text)
        guard let key = SSHPublicKey(blob: container.publicBlob) else { throw .init("its public key is corrupt") }
        guard key.type == "ssh-ed25519" else {
            throw .init("it is an \(key.type) key; octunnel uses Ed25519 keys (`octunnel keygen`)")
        }
        return (key, container.encryption != nil)
    }

    /// The outer, unencrypted layer of an `openssh-key-v1` file.
    struct Container {
        struct Encryption {
            let salt: [UInt8]
            let rounds: Int
        }
        let encryption: Encryption?
        let publicBlob: [UInt8]
        let secret: [UInt8]

        init(_ text: String, maximumRounds: Int = KeyEncryption.maximumRounds) throws(KeyFormatError) {
            let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            guard let first = lines.first else { throw .init("the file is empty") }
            if first.hasPrefix("-----BEGIN") && first != begin {
                if first.contains("ENCRYPTED") {
                    throw .init(
                        "it is an encrypted PEM key; octunnel needs an OpenSSH Ed25519 key (`ssh-keygen -p -f FILE` converts it)"
                    )
                }
                throw .init(
                    "it is a PEM key (\(first.trimmingCharacters(in: CharacterSet(charactersIn: "- ")))"
                        + "), not an OpenSSH private key; convert it with `ssh-keygen "
                        + "-p -f FILE` or make a new one with `octunnel keygen`")
            }
            guard first == begin else {
                if SSHPublicKey.parse(line: first) != nil { throw .init("it is a public key, not a private key") }
                throw .init("it is not an OpenSSH private key (no \(begin) line)")
            }
            guard let endIndex = lines.firstIndex(of: end) else { throw .init("it is truncated (no \(end) line)") }
            let body = lines[1..<endIndex].joined()
            guard let data = Data(base64Encoded: body) else { throw .init("its base64 body is corrupt") }
            do {
                var reader = SSHWireReader([UInt8](data))
                guard try reader.raw(magic.count) == magic else {
                    throw KeyFormatError("it does not start with openssh-key-v1")
                }
                let cipher = try reader.text()
                let kdf = try reader.text()
                let options = try reader.string()
                switch (cipher, kdf) {
                case ("none", "none"):
                    encryption = nil
                case (KeyEncryption.cipher, KeyEncryption.kdf):
                    var optionReader = SSHWireReader(options)
                    let salt = try optionReader.string()
                    let rounds = try optionReader.uint32()
                    guard optionReader.isAtEnd, !salt.isEmpty, salt.count <= KeyEncryption.maximumSaltBytes, rounds >= 1
                    else {
                        throw KeyFormatError("its bcrypt options are corrupt")
                    }
                    // The file sets the cost: a huge count would hold octunnel for hours, so it is refused unrun.
                    guard rounds <= maximumRounds else {
                        throw KeyFormatError(
                            "its passphrase is stretched with \(rounds) bcrypt "
                                + "rounds, more than the \(maximumRounds) octunnel "
                                + "runs (ssh-keygen's default is \(KeyEncryption.defaultRounds)); "
                                + "re-encrypt it with fewer: `ssh-keygen -p -a \(KeyEncryption.defaultRounds) -f FILE`")
                    }
                    encryption = Encryption(salt: salt, rounds: Int(rounds))
                default:
                    throw KeyFormatError(
                        "it is encrypted with \(cipher)/\(kdf); " + "octunnel opens keys encrypted as ssh-keygen "
                            + "writes them (aes256-ctr/bcrypt): re-encrypt it with `ssh-keygen -p -f FILE`")
                }
                let count = try reader.uint32()
                guard count == 1 else { throw KeyFormatError("it holds \(count) keys; exactly one is expected") }
                publicBlob = try reader.string()
                secret = try reader.string()
                guard reader.isAtEnd else { throw KeyFormatError("it has trailing data after the key") }
            } catch let error as KeyFormatError {
                throw error
            } catch {
                throw .init("it is truncated or corrupt")
            }
        }
    }

    private static func decode(publicBlob: [UInt8], secret: [UInt8], blockSize: Int) throws -> Decoded {
        var publicReader = SSHWireReader(publicBlob)
        let publicType = try publicReader.text()
        guard publicType == "ssh-ed25519" else {
            throw KeyFormatError("it is an \(publicType) key; octunnel uses Ed25519 keys (`octunnel keygen`)")
        }
        guard secret.count % blockSize == 0 else {
            throw KeyFormatError("its private section is not padded to \(blockSize) bytes")
        }
        var secretReader = SSHWireReader(secret)
        let check1 = try secretReader.uint32()
        let check2 = try secretReader.uint32()
        guard check1 == check2 else { throw KeyFormatError("its check values differ (corrupt, or encrypted)") }
        let type = try secretReader.text()
        guard type == "ssh-ed25519" else { throw KeyFormatError("it is an \(type) key; octunnel uses Ed25519 keys") }
        let publicKey = try secretReader.string()
        let secretKey = try secretReader.string()
        guard publicKey.count == 32, secretKey.count == 64 else {
            throw KeyFormatError("its Ed25519 key has the wrong length")
        }
        let comment = String(decoding: try secretReader.string(), as: UTF8.self)
        let padding = secretReader.rest()
        for (index, byte) in padding.enumerated() where Int(byte) != index + 1 {
            throw KeyFormatError("its padding is corrupt")
        }
        guard Array(secretKey[32...]) == publicKey, publicBlob == SSHPublicKey(ed25519: publicKey, comment: "").blob
        else {
            throw KeyFormatError("its public and private halves do not match")
        }
        let pair: Ed25519KeyPair
        do {
            pair = try Ed25519KeyPair.fromSeed(Array(secretKey[..<32]))
        } catch {
            throw KeyFormatError("OpenSSL cannot load its Ed25519 seed")
        }
        guard pair.publicKey == publicKey else {
            throw KeyFormatError("its public key does not belong to its private key")
        }
        return Decoded(pair: pair, comment: comment)
    }
}

/// Why an encrypted key could not be opened.
public enum KeyUnlockError: Error, Sendable {
    case format(KeyFormatError)
    case needsPassphrase
    case wrongPassphrase
}

/// How ssh-keygen encrypts `openssh-key-v1` keys: bcrypt_pbkdf, then AES-256 in CTR mode.
public enum KeyEncryption {
    static let cipher = "aes256-ctr"
    static let kdf = "bcrypt"
    static let blockSize = 16
    /// ssh-keygen's default number of KDF rounds (`-a`).
    public static let defaultRounds = 16
    /// The most KDF rounds a key file may ask for. OpenSSH runs whatever the file says (its
    /// bcrypt_pbkdf only refuses 0); octunnel refuses more than this before running one, so a
    /// hostile or corrupt file cannot hold it for hours. 1024 is 64 times ssh-keygen's default
    /// and far above the `-a 100` guides suggest; it takes seconds, not hours.
    public static let maximumRounds = 1024
    /// The longest salt accepted (ssh-keygen writes 16 bytes; bcrypt_pbkdf allows 1 MiB).
    static let maximumSaltBytes = 1 << 20

    /// Encrypts or decrypts `data` in place with the first 32 bytes of `keyAndIV` as the key
    /// and the next 16 as the counter's start.
    static func crypt(_ data: inout [UInt8], keyAndIV: SecretBuffer) throws(OpenSSLError) {
        let failure: OpenSSLError? = keyAndIV.withUnsafeBytes { material in
            data.withUnsafeMutableBytes { bytes -> OpenSSLError? in
                do {
                    try Crypto.aesCTR(
                        key: UnsafeRawBufferPointer(rebasing: material[0..<32]),
                        iv: UnsafeRawBufferPointer(rebasing: material[32..<48]), data: bytes)
                    return nil
                } catch let error as OpenSSLError {
                    return error
                } catch {
                    return OpenSSLError("AES-CTR")
                }
            }
        }
        if let failure { throw failure }
    }
}

/// Why a private key file cannot be used, in words for the user.
public struct KeyFormatError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    /// Some reasons quote the file (its first line, a key type or cipher name): the reason is
    /// made safe to print here, once for all (`OutsideText`).
    init(_ reason: String) { self.reason = OutsideText.shown(reason, limit: 1024) }
    public var description: String { reason }
}
