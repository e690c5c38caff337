import COpenSSL
import Foundation

/// An OpenSSL failure, with the queued error reasons drained from `ERR_get_error`.
public struct OpenSSLError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let reasons: [String]

    init(_ operation: String) {
        self.operation = operation
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(
                String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.reasons = reasons
    }

    public var description: String {
        reasons.isEmpty ? "\(operation) failed" : "\(operation) failed: \(reasons.joined(separator: "; "))"
    }
}

/// The cryptographic primitives octunnel needs, all from OpenSSL.
enum Crypto {
    /// Cryptographically secure random bytes (`RAND_bytes`).
    static func randomBytes(_ count: Int) throws(OpenSSLError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else { throw OpenSSLError("RAND_bytes") }
        return bytes
    }

    /// SHA-1 of `data` (`EVP_Digest` with `EVP_sha1`): only to name things as others do
    /// (OpenCode's `Hash.fast`), never for security.
    static func sha1<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        let input = Array(data)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = EVP_Digest(input, input.count, &digest, &length, EVP_sha1(), nil)
        precondition(ok == 1, "EVP_Digest(SHA-1) cannot fail on valid input")
        return Array(digest.prefix(Int(length)))
    }

    /// SHA-256 of `data` (`EVP_Digest` with `EVP_sha256`).
    static func sha256<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        let input = Array(data)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = EVP_Digest(input, input.count, &digest, &length, EVP_sha256(), nil)
        precondition(ok == 1, "EVP_Digest(SHA-256) cannot fail on valid input")
        return digest
    }

    /// SHA-512 of `data` (`EVP_Digest` with `EVP_sha512`), used by bcrypt_pbkdf.
    static func sha512(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let ok = EVP_Digest(data.baseAddress, data.count, &digest, &length, EVP_sha512(), nil)
        precondition(ok == 1, "EVP_Digest(SHA-512) cannot fail on valid input")
        return digest
    }

    /// AES-CTR over `data` in place (`EVP_aes_{128,192,256}_ctr`): encryption and decryption
    /// are the same operation. `key` is 16, 24 or 32 bytes, `iv` 16.
    static func aesCTR(
        key: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, data: UnsafeMutableRawBufferPointer
    ) throws(OpenSSLError) {
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = EVP_aes_128_ctr()
        case 24: cipher = EVP_aes_192_ctr()
        case 32: cipher = EVP_aes_256_ctr()
        default: throw OpenSSLError("AES key length \(key.count)")
        }
        guard iv.count == 16, let context = EVP_CIPHER_CTX_new() else { throw OpenSSLError("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        guard
            EVP_CipherInit_ex(
                context, cipher, nil, key.bindMemory(to: UInt8.self).baseAddress,
                iv.bindMemory(to: UInt8.self).baseAddress, 1) == 1
        else { throw OpenSSLError("EVP_CipherInit_ex") }
        guard data.count > 0 else { return }
        var produced: Int32 = 0
        let bytes = data.bindMemory(to: UInt8.self)
        guard EVP_CipherUpdate(context, bytes.baseAddress, &produced, bytes.baseAddress, Int32(data.count)) == 1,
            Int(produced) == data.count
        else { throw OpenSSLError("EVP_CipherUpdate") }
    }

    /// HMAC-SHA1 (`HMAC` with `EVP_sha1`), used by OpenSSH's hashed known_hosts names.
    static func hmacSHA1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBuffer in
            HMAC(EVP_sha1(), keyBuffer.baseAddress, Int32(key.count), data, data.count, &digest, &length)
        }
        precondition(result != nil, "HMAC-SHA1 cannot fail on valid input")
        return digest
    }

    /// Constant-time comparison of two byte strings (`CRYPTO_memcmp`).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && CRYPTO_memcmp(a, b, a.count) == 0
    }
}

/// An Ed25519 key pair: the 32-byte seed (private key) and the 32-byte public key.
public struct Ed25519KeyPair: Sendable, Equatable {
    public let seed: [UInt8]
    public let publicKey: [UInt8]

    /// Generates a new key with OpenSSL (`EVP_PKEY_keygen` on `EVP_PKEY_ED25519`).
    public static func generate() throws(OpenSSLError) -> Ed25519KeyPair {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else {
            throw OpenSSLError("EVP_PKEY_CTX_new_id")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw OpenSSLError("EVP_PKEY_keygen_init") }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen(context, &key) == 1, let key else { throw OpenSSLError("EVP_PKEY_keygen") }
        defer { EVP_PKEY_free(key) }
        return try pair(from: key)
    }

    /// Rebuilds the pair from a seed (`EVP_PKEY_new_raw_private_key`), deriving the public key.
    public static func fromSeed(_ seed: [UInt8]) throws(OpenSSLError) -> Ed25519KeyPair {
        guard seed.count == 32, let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, 32) else {
            throw OpenSSLError("EVP_PKEY_new_raw_private_key")
        }
        defer { EVP_PKEY_free(key) }
        return try pair(from: key)
    }

    private static func pair(from key: OpaquePointer) throws(OpenSSLError) -> Ed25519KeyPair {
        var seed = [UInt8](repeating: 0, count: 32)
        var publicKey = [UInt8](repeating: 0, count: 32)
        var seedLength = 32
        var publicLength = 32
        guard EVP_PKEY_get_raw_private_key(key, &seed, &seedLength) == 1, seedLength == 32 else {
            throw OpenSSLError("EVP_PKEY_get_raw_private_key")
        }
        guard EVP_PKEY_get_raw_public_key(key, &publicKey, &publicLength) == 1, publicLength == 32 else {
            throw OpenSSLError("EVP_PKEY_get_raw_public_key")
        }
        return Ed25519KeyPair(seed: seed, publicKey: publicKey)
    }
}
