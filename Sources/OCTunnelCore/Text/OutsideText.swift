/// Text that came from a program octunnel does not control (an HTTP answer behind the VPS, an
/// SSH banner before the host key is checked), made safe to print: secrets it echoes are
/// redacted, and every character a terminal would act on is shown as an escape (`\x1b`), so
/// it can neither move the cursor, set the window title nor hide text in scrollback or a log.
///
/// The one place such text is cleaned; every message that quotes a peer goes through it.
public enum OutsideText {
    /// What stands in for a redacted secret.
    public static let redacted = "***"

    /// `text` with each of `secrets` replaced by `***`, control and bidirectional-formatting
    /// characters shown as `\xHH` / `\u{HHHH}`, and cut to `limit` characters (then `…`).
    /// Idempotent: its output has nothing left to escape.
    public static func shown(_ text: String, secrets: [String] = [], limit: Int = 512) -> String {
        let clean = redacting(text, secrets: secrets)
        var result = ""
        var count = 0
        for scalar in clean.unicodeScalars {
            if count >= limit {
                result += "…"
                break
            }
            result += visible(scalar)
            count += 1
        }
        return result
    }

    /// `text` with each of `secrets` replaced by `***`, nothing else changed. Whatever cuts or
    /// cleans peer text calls this first, on the whole text: a secret cut in two at a length
    /// limit, or with its non-ASCII letters blanked, no longer matches and would show in part.
    public static func redacting(_ text: String, secrets: [String]) -> String {
        // Most texts hold no secret: a byte search says so without Foundation's string search,
        // which was a tenth of the cost of following 20,000 sessions.
        guard secrets.contains(where: { contains(text, $0) }) else { return text }
        var clean = text
        // Longest first, so a secret that contains another is redacted whole.
        for secret in secrets.filter({ !$0.isEmpty }).sorted(by: { $0.utf8.count > $1.utf8.count }) {
            clean = clean.replacingScalars(secret, with: redacted)
        }
        return clean
    }

    /// Whether `needle`'s UTF-8 bytes occur in `text`'s.
    static func contains(_ text: String, _ needle: String) -> Bool {
        let wanted = Array(needle.utf8)
        guard let first = wanted.first else { return false }
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count >= wanted.count else { return false }
            var index = 0
            while index <= bytes.count - wanted.count {
                if bytes[index] == first {
                    var matched = 1
                    while matched < wanted.count && bytes[index + matched] == wanted[matched] { matched += 1 }
                    if matched == wanted.count { return true }
                }
                index += 1
            }
            return false
        }
    }

    /// One scalar as it may reach a terminal.
    static func visible(_ scalar: Unicode.Scalar) -> String {
        let value = scalar.value
        if value < 0x20 || value == 0x7f || (0x80...0x9f).contains(value) {
            return "\\x" + hex(value, width: 2)
        }
        if isInvisibleFormat(value) { return "\\u{" + hex(value, width: 4) + "}" }
        return String(scalar)
    }

    /// Bidirectional overrides and isolates (they reorder what follows, "Trojan Source"),
    /// zero-width and line/paragraph separators, and the BOM.
    private static func isInvisibleFormat(_ value: UInt32) -> Bool {
        (0x200b...0x200f).contains(value) || (0x2028...0x202e).contains(value) || (0x2066...0x2069).contains(value)
            || value == 0xfeff
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension OpenCodeCredentials {
    /// `text` from the server behind the tunnel as it may be shown: the password and its Basic
    /// token redacted (a hostile server may echo them), control characters visible.
    func shown(_ text: String, limit: Int = 512) -> String {
        OutsideText.shown(redact(text), limit: limit)
    }
}
