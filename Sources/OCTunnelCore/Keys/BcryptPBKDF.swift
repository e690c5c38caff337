/// OpenSSH's `bcrypt_pbkdf` (openbsd-compat/bcrypt_pbkdf.c): the key derivation that turns a
/// passphrase into the AES key and IV of an encrypted `openssh-key-v1` file. OpenSSL has no
/// bcrypt, so it is implemented here on top of Blowfish's expensive key schedule (EksBlowfish).
public enum BcryptPBKDF {
    /// Why no key could be derived: the same limits OpenSSH enforces.
    public enum Failure: Error, Equatable, Sendable {
        case badParameters
    }

    /// Derives `count` bytes from `passphrase` and `salt` with `rounds` rounds.
    public static func derive(
        passphrase: UnsafeRawBufferPointer, salt: [UInt8], count: Int, rounds: Int
    ) throws(Failure) -> SecretBuffer {
        let blockSize = 32
        guard rounds >= 1, passphrase.count > 0, !salt.isEmpty, count > 0, count <= blockSize * blockSize,
            salt.count <= 1 << 20
        else {
            throw .badParameters
        }
        let stride = (count + blockSize - 1) / blockSize
        var amount = (count + stride - 1) / stride
        let key = SecretBuffer(count: count)
        let passHash = SecretBuffer(bytes: Crypto.sha512(passphrase))
        var countSalt = salt + [0, 0, 0, 0]
        var remaining = count
        var blockNumber: UInt32 = 1
        var output = [UInt8](repeating: 0, count: blockSize)
        var scratch = [UInt8](repeating: 0, count: blockSize)
        defer {
            wipe(&output)
            wipe(&scratch)
        }
        while remaining > 0 {
            countSalt[salt.count] = UInt8(blockNumber >> 24 & 0xff)
            countSalt[salt.count + 1] = UInt8(blockNumber >> 16 & 0xff)
            countSalt[salt.count + 2] = UInt8(blockNumber >> 8 & 0xff)
            countSalt[salt.count + 3] = UInt8(blockNumber & 0xff)
            var saltHash = countSalt.withUnsafeBytes { Crypto.sha512($0) }
            bcryptHash(passHash: passHash, saltHash: saltHash, into: &scratch)
            output = scratch
            for _ in 0..<(rounds - 1) {
                saltHash = scratch.withUnsafeBytes { Crypto.sha512($0) }
                bcryptHash(passHash: passHash, saltHash: saltHash, into: &scratch)
                for index in 0..<blockSize { output[index] ^= scratch[index] }
            }
            wipe(&saltHash)
            amount = min(amount, remaining)
            var written = 0
            while written < amount {
                let destination = written * stride + Int(blockNumber - 1)
                if destination >= count { break }
                key[destination] = output[written]
                written += 1
            }
            remaining -= written
            blockNumber += 1
        }
        return key
    }

    /// One bcrypt hash: EksBlowfish keyed by the SHA-512 of passphrase and salt, then 64
    /// encryptions of "OxychromaticBlowfishSwatDynamite", written out little-endian per word.
    @_optimize(speed)
    private static func bcryptHash(passHash: SecretBuffer, saltHash: [UInt8], into out: inout [UInt8]) {
        let state = Blowfish()
        defer { state.wipe() }
        passHash.withUnsafeBytes { pass in
            saltHash.withUnsafeBytes { salt in
                state.expand(data: salt, key: pass)
                for _ in 0..<64 {
                    state.expand(key: salt)
                    state.expand(key: pass)
                }
            }
        }
        var words = [UInt32](repeating: 0, count: 8)
        let magic = Array("OxychromaticBlowfishSwatDynamite".utf8)
        magic.withUnsafeBytes { bytes in
            var position = 0
            for index in 0..<8 { words[index] = Blowfish.streamWord(bytes, &position) }
        }
        for _ in 0..<64 {
            for block in 0..<4 {
                var left = words[2 * block]
                var right = words[2 * block + 1]
                state.encipher(&left, &right)
                words[2 * block] = left
                words[2 * block + 1] = right
            }
        }
        for index in 0..<8 {
            out[4 * index + 3] = UInt8(words[index] >> 24 & 0xff)
            out[4 * index + 2] = UInt8(words[index] >> 16 & 0xff)
            out[4 * index + 1] = UInt8(words[index] >> 8 & 0xff)
            out[4 * index] = UInt8(words[index] & 0xff)
        }
        for index in 0..<8 { words[index] = 0 }
    }

    static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}

/// Blowfish's state (18 subkeys and four S-boxes) with the key schedule bcrypt needs.
/// Kept in one manually allocated buffer: the KDF runs it millions of times.
struct Blowfish {
    /// P[0..<18] then S0..S3 (256 words each).
    private let words: UnsafeMutablePointer<UInt32>
    private static let count = BlowfishTables.count

    init() {
        words = .allocate(capacity: Self.count)
        words.initialize(from: BlowfishTables.words, count: Self.count)
    }

    /// Zeroes and frees the state.
    func wipe() {
        words.update(repeating: 0, count: Self.count)
        words.deallocate()
    }

    /// The next big-endian 32-bit word of `data`, wrapping around at its end.
    @_optimize(speed) @inline(__always)
    static func streamWord(_ data: UnsafeRawBufferPointer, _ position: inout Int) -> UInt32 {
        var word: UInt32 = 0
        for _ in 0..<4 {
            if position >= data.count { position = 0 }
            word = word << 8 | UInt32(data[position])
            position += 1
        }
        return word
    }

    @_optimize(speed) @inline(__always)
    private func feistel(_ x: UInt32) -> UInt32 {
        let s = words + 18
        let a = s[Int(x >> 24)]
        let b = s[256 + Int(x >> 16 & 0xff)]
        let c = s[512 + Int(x >> 8 & 0xff)]
        let d = s[768 + Int(x & 0xff)]
        return ((a &+ b) ^ c) &+ d
    }

    /// Encrypts one 64-bit block in place (16 rounds).
    @_optimize(speed) @inline(__always)
    func encipher(_ left: inout UInt32, _ right: inout UInt32) {
        var l = left ^ words[0]
        var r = right
        var round = 1
        while round <= 16 {
            r ^= feistel(l) ^ words[round]
            l ^= feistel(r) ^ words[round + 1]
            round += 2
        }
        left = r ^ words[17]
        right = l
    }

    /// `Blowfish_expandstate`: mixes `key` into the subkeys, then re-encrypts the whole state
    /// with `data` folded in.
    @_optimize(speed)
    func expand(data: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) {
        var position = 0
        for index in 0..<18 { words[index] ^= Self.streamWord(key, &position) }
        position = 0
        var left: UInt32 = 0
        var right: UInt32 = 0
        var index = 0
        while index < Self.count {
            left ^= Self.streamWord(data, &position)
            right ^= Self.streamWord(data, &position)
            encipher(&left, &right)
            words[index] = left
            words[index + 1] = right
            index += 2
        }
    }

    /// `Blowfish_expand0state`: the same without data.
    @_optimize(speed)
    func expand(key: UnsafeRawBufferPointer) {
        var position = 0
        for index in 0..<18 { words[index] ^= Self.streamWord(key, &position) }
        var left: UInt32 = 0
        var right: UInt32 = 0
        var index = 0
        while index < Self.count {
            encipher(&left, &right)
            words[index] = left
            words[index + 1] = right
            index += 2
        }
    }
}
