import Foundation

/// What one answer may cost the health probe, whatever the server sends and however long
/// `--health-timeout` is: memory stays flat (a few read buffers) for the whole timeout.
enum HTTPLimits {
    /// The status line, a header line or a chunk-size line.
    static let lineBytes = 16384
    /// The whole head (status line and headers).
    static let headBytes = 65536
    static let headerCount = 100
    /// An event stream may send this much before `server.connected` (OpenCode sends it first).
    static let eventStreamBytes = 16 << 20

    /// A three-digit status code; nil for anything else ("-5", "99999999999999999999").
    static func statusCode<S: StringProtocol>(_ text: S) -> Int? {
        guard text.utf8.count == 3, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(text).flatMap { (100...999).contains($0) ? $0 : nil }
    }

    /// Content-Length: decimal digits only (no sign, no spaces inside) that fit an `Int`.
    static func contentLength(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else {
            return nil
        }
        return Int(text)
    }

    /// A chunk-size line (RFC 9112 §7.1): hex digits only, extensions after `;` ignored, at
    /// most 15 digits so that it and every sum with it fits an `Int`. "-1", "+5", "" are nil.
    static func chunkSize(_ line: String) -> Int? {
        let digits = (line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        guard !digits.isEmpty, digits.utf8.count <= 15,
            digits.utf8.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit })
        else { return nil }
        return Int(digits, radix: 16)
    }
}
