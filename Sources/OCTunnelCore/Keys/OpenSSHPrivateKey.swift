import Foundation

/// OpenSSH's `openssh-key-v1` private key format (PROTOCOL.key), for unencrypted Ed25519 keys.
public enum OpenSSHPrivateKey {
    static let magic = Array("openssh-key-v1".utf8) + [0]
    static let begin = "-----BEGIN OPENSSH PRIVATE KEY-----"
    static let end = "-----END OPENSSH PRIVATE KEY-----"

    /// Encodes the pair and its comment as the armoured text `ssh-keygen` writes.
    public static func encode(_ pair: Ed25519KeyPair, comment: String, checkValue: UInt32) -> String {
        let publicKey = SSHPublicKey(ed25519: pair.publicKey, comment: comment)
        var secret = SSHWireWriter()
        secret.uint32(checkValue)
        secret.uint32(checkValue)
        secret.string("ssh-ed25519")
        secret.string(pair.publicKey)
        secret.string(pair.seed + pair.publicKey)
        secret.string(comment)
        var pad: UInt8 = 1
        while secret.bytes.count % 8 != 0 {
            secret.raw([pad])
            pad += 1
        }
        var blob = SSHWireWriter()
        blob.raw(magic)
        blob.string("none")
        blob.string("none")
        blob.string("")
        blob.uint32(1)
        blob.string(publicKey.blob)
        blob.string(secret.bytes)
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

    /// Decodes an armoured key, saying precisely what is wrong with anything it cannot use.
    public static func decode(_ text: String) throws(KeyFormatError) -> Decoded {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard let first = lines.first else { throw .init("the file is empty") }
        if first.hasPrefix("-----BEGIN") && first != begin {
            if first.contains("ENCRYPTED") { throw .init("it is an encrypted PEM key; octunnel needs an unencrypted OpenSSH Ed25519 key") }
            throw .init("it is a PEM key (\(first.trimmingCharacters(in: CharacterSet(charactersIn: "- ")))), not an OpenSSH private key; convert it with `ssh-keygen -p -f FILE` or make a new one with `octunnel keygen`")
        }
        guard first == begin else {
            if SSHPublicKey.parse(line: first) != nil { throw .init("it is a public key, not a private key") }
            throw .init("it is not an OpenSSH private key (no \(begin) line)")
        }
        guard let endIndex = lines.firstIndex(of: end) else { throw .init("it is truncated (no \(end) line)") }
        let body = lines[1..<endIndex].joined()
        guard let data = Data(base64Encoded: body) else { throw .init("its base64 body is corrupt") }
        do {
            return try decode(blob: [UInt8](data))
        } catch let error as KeyFormatError {
            throw error
        } catch {
            throw .init("it is truncated or corrupt")
        }
    }

    private static func decode(blob: [UInt8]) throws -> Decoded {
        var reader = SSHWireReader(blob)
        guard try reader.raw(magic.count) == magic else { throw KeyFormatError("it does not start with openssh-key-v1") }
        let cipher = try reader.text()
        let kdf = try reader.text()
        _ = try reader.string()
        guard cipher == "none", kdf == "none" else {
            throw KeyFormatError("it is encrypted with a passphrase (\(cipher)/\(kdf)); octunnel runs unattended and needs an unencrypted key: remove the passphrase with `ssh-keygen -p -N '' -f FILE` or make a new key with `octunnel keygen`")
        }
        let count = try reader.uint32()
        guard count == 1 else { throw KeyFormatError("it holds \(count) keys; exactly one is expected") }
        let publicBlob = try reader.string()
        let secret = try reader.string()
        guard reader.isAtEnd else { throw KeyFormatError("it has trailing data after the key") }
        var publicReader = SSHWireReader(publicBlob)
        let publicType = try publicReader.text()
        guard publicType == "ssh-ed25519" else {
            throw KeyFormatError("it is an \(publicType) key; octunnel uses Ed25519 keys (`octunnel keygen`)")
        }
        guard secret.count % 8 == 0 else { throw KeyFormatError("its private section is not padded to 8 bytes") }
        var secretReader = SSHWireReader(secret)
        let check1 = try secretReader.uint32()
        let check2 = try secretReader.uint32()
        guard check1 == check2 else { throw KeyFormatError("its check values differ (corrupt, or encrypted)") }
        let type = try secretReader.text()
        guard type == "ssh-ed25519" else { throw KeyFormatError("it is an \(type) key; octunnel uses Ed25519 keys") }
        let publicKey = try secretReader.string()
        let secretKey = try secretReader.string()
        guard publicKey.count == 32, secretKey.count == 64 else { throw KeyFormatError("its Ed25519 key has the wrong length") }
        let comment = String(decoding: try secretReader.string(), as: UTF8.self)
        let padding = secretReader.rest()
        for (index, byte) in padding.enumerated() where Int(byte) != index + 1 {
            throw KeyFormatError("its padding is corrupt")
        }
        guard Array(secretKey[32...]) == publicKey, publicBlob == SSHPublicKey(ed25519: publicKey, comment: "").blob else {
            throw KeyFormatError("its public and private halves do not match")
        }
        let pair: Ed25519KeyPair
        do {
            pair = try Ed25519KeyPair.fromSeed(Array(secretKey[..<32]))
        } catch {
            throw KeyFormatError("OpenSSL cannot load its Ed25519 seed")
        }
        guard pair.publicKey == publicKey else { throw KeyFormatError("its public key does not belong to its private key") }
        return Decoded(pair: pair, comment: comment)
    }
}

/// Why a private key file cannot be used, in words for the user.
public struct KeyFormatError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
