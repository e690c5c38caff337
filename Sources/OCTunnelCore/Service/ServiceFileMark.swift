/// The line that marks a service file as octunnel's: `octunnel-managed sha256:HEX`, the SHA-256
/// of every other line, so a file octunnel did not write, or that was changed since, is told
/// apart and never overwritten or removed without `--force`.
enum ServiceFileMark {
    static let tag = "octunnel-managed sha256:"

    /// What an existing file is to octunnel.
    enum Verdict: Equatable {
        /// Written by octunnel and unchanged.
        case ours
        /// Written by octunnel, then changed.
        case edited
        /// Not written by octunnel.
        case foreign
    }

    /// `lines` with the mark inserted at `index`, wrapped as `prefix`mark`suffix` (a comment of the file's syntax).
    static func seal(_ lines: [String], at index: Int, prefix: String, suffix: String) -> String {
        var sealed = lines
        sealed.insert(prefix + tag + digest(lines) + suffix, at: index)
        return sealed.joined(separator: "\n")
    }

    static func verdict(of text: String) -> Verdict {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let index = lines.firstIndex(where: { $0.contains(tag) }) else { return .foreign }
        let line = lines.remove(at: index)
        guard let start = line.range(of: tag)?.upperBound else { return .foreign }
        let recorded = line[start...].prefix(64)
        return recorded == digest(lines) ? .ours : .edited
    }

    private static func digest(_ lines: [String]) -> String {
        Crypto.sha256(Array(lines.joined(separator: "\n").utf8)).map { String($0, radix: 16).leftPadded(to: 2) }
            .joined()
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
