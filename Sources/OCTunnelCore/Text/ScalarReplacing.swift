extension String {
    /// This text with every occurrence of `target` replaced by `replacement`, compared scalar by
    /// scalar. Foundation's `replacingOccurrences(of:with:)` compares Characters, so a `"` or `'`
    /// followed by a combining mark (one Character: `"́`) is not found: an escape written with it
    /// leaves that quote bare (FuzzForwardSpec found a key line whose forced command ended
    /// early so), and a secret followed by one is not redacted. Every escape and redaction uses this.
    func replacingScalars(_ target: String, with replacement: String) -> String {
        let wanted = Array(target.unicodeScalars)
        guard !wanted.isEmpty else { return self }
        let scalars = Array(unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if scalars[index] == wanted[0], index + wanted.count <= scalars.count,
                scalars[index..<index + wanted.count].elementsEqual(wanted)
            {
                result.append(contentsOf: replacement.unicodeScalars)
                index += wanted.count
            } else {
                result.append(scalars[index])
                index += 1
            }
        }
        return String(result)
    }
}
