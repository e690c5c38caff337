/// Peer text as octunnel keeps it (a session's title, a request's words from OpenCode's event
/// stream): the secrets redacted and the whole cut to a few hundred bytes where it is stored, so
/// a hostile peer's megabyte title costs a few hundred bytes, and no part of a secret survives.
///
/// The text is cut first and redacted after, so the work is bounded by the cut, not by what the
/// peer sent; a secret that the cut splits would then show its first part at the end, so any
/// end that begins a secret is dropped as well (`OutsideText.redacting` says why the order
/// matters when the cut comes after).
enum KeptText {
    /// What marks a cut.
    static let cutMark = "…"

    /// `text` with `secrets` redacted, at most `bytes` UTF-8 bytes of it (whole scalars), `…`
    /// after a cut.
    static func kept(_ text: String, bytes: Int, secrets: [String]) -> String {
        guard text.utf8.count > bytes else { return OutsideText.redacting(text, secrets: secrets) }
        var end = text.unicodeScalars.startIndex
        var used = 0
        for index in text.unicodeScalars.indices {
            let size = UTF8.width(text.unicodeScalars[index])
            if used + size > bytes { break }
            used += size
            end = text.unicodeScalars.index(after: index)
        }
        var kept = OutsideText.redacting(String(text.unicodeScalars[..<end]), secrets: secrets)
        kept.removeLast(splitSecretLength(kept, secrets: secrets))
        return kept + cutMark
    }

    /// How many characters at the end of `text` are the start of a secret (cut in two there).
    private static func splitSecretLength(_ text: String, secrets: [String]) -> Int {
        var longest = 0
        for secret in secrets where !secret.isEmpty {
            var length = min(secret.count - 1, text.count)
            while length > longest {
                if text.hasSuffix(secret.prefix(length)) { longest = length; break }
                length -= 1
            }
        }
        return longest
    }
}
