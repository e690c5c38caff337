import Foundation

/// A JSON text `JSONSerialization` has accepted, read again into a `JSONValue` whose objects keep the
/// text's order (`JSONDecoder` gives keys in no order) and, as `JSONSerialization` reads them,
/// a key's last value when the text repeats it. Every step checks the end of the bytes: an odd
/// text gives a shorter answer, never a crash.
struct JSONTextReader {
    private let bytes: [UInt8]
    private var index = 0
    /// The bytes that end a number, `true`, `false` or `null`.
    private static let scalarEnds = Set(",]} \t\n\r".utf8)
    /// What a JSON number is written with.
    private static let numberCharacters = Set("0123456789+-.eE".unicodeScalars)

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 } // a UTF-8 byte order mark
    }

    private var next: UInt8 { index < bytes.count ? bytes[index] : 0 }

    private mutating func skipSpace() {
        while [0x20, 0x09, 0x0A, 0x0D].contains(next) { index += 1 }
    }

    /// The value at the current place.
    mutating func value() -> JSONValue {
        skipSpace()
        switch next {
        case UInt8(ascii: "{"): return .object(object())
        case UInt8(ascii: "["): return .array(array())
        case UInt8(ascii: "\""): return .string(string())
        default: return scalar()
        }
    }

    private mutating func object() -> JSONObject {
        index += 1
        var object = JSONObject()
        while index < bytes.count {
            skipSpace()
            if next == UInt8(ascii: "}") { index += 1; break }
            if next == UInt8(ascii: ",") { index += 1; continue }
            guard next == UInt8(ascii: "\"") else { break }
            let key = string()
            skipSpace()
            if next == UInt8(ascii: ":") { index += 1 }
            object.append(key, value())
        }
        return object
    }

    private mutating func array() -> [JSONValue] {
        index += 1
        var items: [JSONValue] = []
        while index < bytes.count {
            skipSpace()
            if next == UInt8(ascii: "]") { index += 1; break }
            if next == UInt8(ascii: ",") { index += 1; continue }
            let start = index
            items.append(value())
            if index == start { break }
        }
        return items
    }

    /// The string token here, unescaped as `JSONDecoder` does.
    private mutating func string() -> String {
        let start = index
        index += 1
        var escaped = false
        while index < bytes.count, next != UInt8(ascii: "\"") {
            escaped = escaped || next == UInt8(ascii: "\\")
            index += next == UInt8(ascii: "\\") ? 2 : 1
        }
        index = min(index + 1, bytes.count)
        guard escaped else {
            return String(decoding: bytes[min(start + 1, index)..<max(start + 1, index - 1)], as: UTF8.self)
        }
        return (try? JSONDecoder().decode(String.self, from: Data(bytes[start..<index]))) ?? ""
    }

    /// A number, `true`, `false` or `null`.
    private mutating func scalar() -> JSONValue {
        let start = index
        while index < bytes.count, !Self.scalarEnds.contains(next) { index += 1 }
        let token = String(decoding: bytes[start..<index], as: UTF8.self)
        switch token {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "null": return .null
        default:
            if let integer = Int(token) { return .integer(integer) }
            guard let value = Double(token) else { return .null }
            // The text is kept to be written back only when it is made of a number's characters.
            let numeric = token.unicodeScalars.allSatisfy { Self.numberCharacters.contains($0) }
            return .number(JSONNumber(value, text: numeric ? token : nil))
        }
    }
}
