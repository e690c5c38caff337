import Foundation

/// Builds SSH wire-format data: big-endian uint32s and length-prefixed strings (RFC 4251).
struct SSHWireWriter {
    private(set) var bytes: [UInt8] = []

    mutating func uint32(_ value: UInt32) {
        bytes += [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    mutating func string<C: Collection>(_ value: C) where C.Element == UInt8 {
        uint32(UInt32(value.count))
        bytes += value
    }

    mutating func string(_ value: String) { string(Array(value.utf8)) }

    mutating func raw<C: Collection>(_ value: C) where C.Element == UInt8 { bytes += value }
}

/// Reads SSH wire-format data, failing on anything short or oversized.
struct SSHWireReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init<C: Collection>(_ bytes: C) where C.Element == UInt8 { self.bytes = Array(bytes) }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    mutating func uint32() throws(WireError) -> UInt32 {
        guard remaining >= 4 else { throw .truncated }
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    mutating func byte() throws(WireError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func raw(_ count: Int) throws(WireError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func string() throws(WireError) -> [UInt8] {
        let length = try uint32()
        guard Int(length) <= remaining else { throw .truncated }
        return try raw(Int(length))
    }

    mutating func text() throws(WireError) -> String {
        let value = try string()
        guard let text = String(validating: value, as: UTF8.self) else { throw .notText }
        return text
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

/// Why SSH wire data could not be read.
enum WireError: Error {
    case truncated
    case notText
}
