import COpenSSL

/// Bytes that must not outlive their use (a passphrase, a decrypted key): kept in memory
/// this object allocates itself, never copied by Swift, zeroed with `OPENSSL_cleanse` and freed
/// when the last reference goes.
public final class SecretBuffer: @unchecked Sendable {
    private let pointer: UnsafeMutableRawBufferPointer

    /// `count` zero bytes.
    public init(count: Int) {
        pointer = .allocate(byteCount: max(count, 1), alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
    }

    /// A copy of `bytes`; the caller wipes its own copy.
    public convenience init<C: Collection>(bytes: C) where C.Element == UInt8 {
        self.init(count: bytes.count)
        for (index, byte) in bytes.enumerated() { pointer[index] = byte }
    }

    public let count: Int

    public subscript(index: Int) -> UInt8 {
        get { precondition(index < count); return pointer[index] }
        set { precondition(index < count); pointer[index] = newValue }
    }

    /// Reads the bytes in place.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: pointer[0..<count]))
    }

    /// Writes the bytes in place.
    public func withUnsafeMutableBytes<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(rebasing: pointer[0..<count]))
    }

    /// A new buffer holding `range` of this one.
    public func slice(_ range: Range<Int>) -> SecretBuffer {
        precondition(range.upperBound <= count)
        let part = SecretBuffer(count: range.count)
        for index in range { part.pointer[index - range.lowerBound] = pointer[index] }
        return part
    }

    /// Whether both hold the same bytes (constant time).
    public func isEqual(to other: SecretBuffer) -> Bool {
        count == other.count
            && withUnsafeBytes { a in
                other.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, count) == 0 }
            }
    }

    deinit {
        OPENSSL_cleanse(pointer.baseAddress, pointer.count)
        pointer.deallocate()
    }
}

/// What System/ fills a secret into (`TerminalReader`, `ChildProcess.runForSecret`).
extension SecretBuffer: SecretStorage {}
