import Foundation

/// The keys of every object in a JSON text, in the text's order (`JSONDecoder` gives them in no
/// order): read from a text `JSONDecoder` has accepted, so it only finds where each token ends.
/// Every step checks the end of the bytes: an odd text gives a shorter answer, never a crash.
struct JSONKeyOrder {
    /// One value's shape: an object's keys with theirs, an array's items, or a scalar.
    indirect enum Node {
        case object([(key: String, node: Node)])
        case array([Node])
        case scalar
    }

    let bytes: [UInt8]
    private var index = 0
    /// The bytes that end a number, `true`, `false` or `null`.
    private static let scalarEnds = Set(",]} \t\n\r".utf8)

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }  // a UTF-8 byte order mark
    }

    private var next: UInt8 { index < bytes.count ? bytes[index] : 0 }

    private mutating func skipSpace() {
        while [0x20, 0x09, 0x0A, 0x0D].contains(next) { index += 1 }
    }

    /// The value at the current place.
    mutating func node() -> Node {
        skipSpace()
        switch next {
        case UInt8(ascii: "{"): return .object(members())
        case UInt8(ascii: "["): return .array(items())
        case UInt8(ascii: "\""): _ = string(); return .scalar
        default:
            while index < bytes.count, !Self.scalarEnds.contains(next) { index += 1 }
            return .scalar
        }
    }

    private mutating func members() -> [(key: String, node: Node)] {
        index += 1
        var members: [(key: String, node: Node)] = []
        while index < bytes.count {
            skipSpace()
            if next == UInt8(ascii: "}") { index += 1; break }
            if next == UInt8(ascii: ",") { index += 1; continue }
            guard next == UInt8(ascii: "\"") else { break }
            let key = string()
            skipSpace()
            if next == UInt8(ascii: ":") { index += 1 }
            members.append((key, node()))
        }
        return members
    }

    private mutating func items() -> [Node] {
        index += 1
        var items: [Node] = []
        while index < bytes.count {
            skipSpace()
            if next == UInt8(ascii: "]") { index += 1; break }
            if next == UInt8(ascii: ",") { index += 1; continue }
            let start = index
            items.append(node())
            if index == start { break }
        }
        return items
    }

    /// The string token here, unescaped as `JSONDecoder` does ("" when it cannot be).
    private mutating func string() -> String {
        let start = index
        index += 1
        while index < bytes.count, next != UInt8(ascii: "\"") {
            index += next == UInt8(ascii: "\\") ? 2 : 1
        }
        index = min(index + 1, bytes.count)
        return (try? JSONDecoder().decode(String.self, from: Data(bytes[start..<index]))) ?? ""
    }
}
