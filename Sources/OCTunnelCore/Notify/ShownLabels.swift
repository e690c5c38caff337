/// A question's option labels as a notification's buttons show them (issue 55, finding 6): a click
/// must send a label the user saw, so two buttons never look alike.
///
/// Each label loses what cannot be seen (format characters, Unicode's default-ignorable code
/// points: U+2060, zero-width spaces and joiners, bidi controls, variation selectors, Hangul
/// fillers), has its runs of spaces and line/paragraph separators shown as one space, trimmed, and
/// is then shown safe (`OutsideText.shown`: secrets redacted, control characters as escapes) and cut
/// to `limit` characters. The forms are compared as displayed (canonically equivalent text is the
/// same text). When two cut forms collide, labels too long to show whole show their start and end
/// (`start…end`); when that still collides, when two labels differ only in what cannot be seen, or
/// when one shows nothing, there are no forms, and so no buttons: the question is answered in OpenCode.
enum ShownLabels {
    /// Characters of a label a button shows before it is cut.
    static let limit = 40

    /// One shown form per label, pairwise distinct as displayed; nil when they cannot be.
    static func forms(_ labels: [String], secrets: [String] = [], limit: Int = limit) -> [String]? {
        let clean = labels.map { visibleText($0, secrets: secrets) }
        guard clean.allSatisfy({ !$0.isEmpty }), distinct(clean) else { return nil }
        let cut = clean.map { OutsideText.shown($0, limit: limit) }
        if distinct(cut) { return cut }
        let ends = clean.map { startAndEnd($0, limit: limit) }
        return distinct(ends) ? ends : nil
    }

    /// `label` as it could be seen whole: redacted, invisible characters dropped, spaces collapsed and
    /// trimmed (redacted again: a secret split by an invisible character is whole once it is dropped).
    static func visibleText(_ label: String, secrets: [String]) -> String {
        var result = ""
        var pendingSpace = false
        for scalar in OutsideText.redacting(label, secrets: secrets).unicodeScalars {
            if isInvisible(scalar) { continue }
            if isSpace(scalar) {
                pendingSpace = !result.isEmpty
                continue
            }
            if pendingSpace { result += " " }
            pendingSpace = false
            result.unicodeScalars.append(scalar)
        }
        return OutsideText.redacting(result, secrets: secrets)
    }

    /// Whether `scalar` takes no room and shows no mark: a format character (Cf) or a default-ignorable
    /// code point (which adds variation selectors, Hangul fillers, the combining grapheme joiner).
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .format || scalar.properties.isDefaultIgnorableCodePoint
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        [.spaceSeparator, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
    }

    /// `text` shown whole when it fits, else its first and last characters around `…`.
    private static func startAndEnd(_ text: String, limit: Int) -> String {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count > limit else { return OutsideText.shown(text, limit: limit) }
        let head = (limit - 1) / 2
        let tail = limit - 1 - head
        let shown = { (part: ArraySlice<Unicode.Scalar>) in
            OutsideText.shown(String(String.UnicodeScalarView(part)), limit: limit)
        }
        return shown(scalars[..<head]) + "…" + shown(scalars[(scalars.count - tail)...])
    }

    /// Whether no two of `forms` look the same (String's `==` is canonical equivalence).
    private static func distinct(_ forms: [String]) -> Bool {
        Set(forms).count == forms.count
    }
}
