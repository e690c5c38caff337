import Foundation

/// One line of an OpenSSH known_hosts file, kept byte for byte alongside what it means.
public struct KnownHostsLine: Sendable {
    public let raw: [UInt8]
    public let number: Int
    public let content: Content

    /// What a line says: nothing (blank, comment), a host entry, or something unreadable.
    public enum Content: Sendable {
        case ignorable
        case entry(KnownHostEntry)
        case malformed(String)
    }

    public var entry: KnownHostEntry? {
        if case .entry(let entry) = content { return entry }
        return nil
    }
}

/// A parsed known_hosts entry: `[@marker] patterns keytype base64key [comment]`.
public struct KnownHostEntry: Sendable {
    /// The `@cert-authority` / `@revoked` markers OpenSSH defines.
    public enum Marker: String, Sendable {
        case certAuthority = "@cert-authority"
        case revoked = "@revoked"
    }

    public let marker: Marker?
    public let hosts: String
    public let keyType: String
    public let keyBlob: [UInt8]

    public var fingerprint: String { Fingerprint.sha256(keyBlob) }
    public var isHashed: Bool { hosts.hasPrefix("|1|") }

    /// How this entry's host field relates to a `host`/`[host]:port` name.
    public enum Match: Equatable {
        case none
        /// Named exactly (a hashed entry, or a literal name in the list).
        case exact
        /// Matched only by a wildcard pattern.
        case pattern
        /// A negated pattern excludes the name.
        case negated
    }

    /// Matches the host field against `name`, as OpenSSH's match_hostname does.
    public func match(_ name: String) -> Match {
        let name = name.lowercased()
        if isHashed { return HashedHostName.matches(hosts, name: name) ? .exact : .none }
        var result = Match.none
        // Scalar by scalar, like OpenSSH's bytes: `,́` still separates and `!́` still negates.
        for pattern in hostPatterns {
            var pattern = pattern.lowercased()
            let negated = pattern.unicodeScalars.first == "!"
            if negated { pattern.unicodeScalars.removeFirst() }
            let isWildcard = pattern.utf8.contains(UInt8(ascii: "*")) || pattern.utf8.contains(UInt8(ascii: "?"))
            let hit = isWildcard ? wildcardMatch(Array(pattern.utf8), Array(name.utf8)) : pattern == name
            guard hit else { continue }
            if negated { return .negated }
            if !isWildcard { result = .exact } else if result == .none { result = .pattern }
        }
        return result
    }

    /// The comma-separated patterns of the host field, split on the `,` scalar.
    public var hostPatterns: [String] {
        hosts.unicodeScalars.split(separator: ",").map(String.init)
    }

    /// OpenSSH's display of the host field: `[h]:p` as `h:p`, bare names as `h:22`.
    public var displayHosts: String {
        if isHashed { return "(hashed) \(hosts)" }
        return hosts.split(separator: ",").map { pattern -> String in
            let text = String(pattern)
            if text.hasPrefix("[") || text.hasPrefix("![") {
                // An IPv6 host keeps its brackets ([::1]:2222), the form `trust reset` accepts.
                if let close = text.lastIndex(of: "]"), text[..<close].contains(":") { return text }
                return text.replacingOccurrences(of: "]:", with: ":").replacingOccurrences(of: "[", with: "")
            }
            return text.contains(":") ? "[\(text)]:22" : "\(text):22"
        }.joined(separator: ",")
    }
}

/// `*` and `?` glob matching, as in OpenSSH's match_pattern.
func wildcardMatch(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
    var p = 0, t = 0
    var star = -1, mark = 0
    while t < text.count {
        if p < pattern.count && (pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t]) {
            p += 1; t += 1
        } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
            star = p; mark = t; p += 1
        } else if star >= 0 {
            p = star + 1; mark += 1; t = mark
        } else {
            return false
        }
    }
    while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
    return p == pattern.count
}

/// OpenSSH's hashed host names: `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`.
public enum HashedHostName {
    public static func matches(_ field: String, name: String) -> Bool {
        let parts = field.split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[1] == "1",
            let salt = Data(base64Encoded: String(parts[2])), let hash = Data(base64Encoded: String(parts[3]))
        else { return false }
        return Crypto.constantTimeEqual(Crypto.hmacSHA1(key: [UInt8](salt), data: Array(name.utf8)), [UInt8](hash))
    }

    /// Hashes `name` with a given salt (for tests and for `ssh-keygen -H` compatible output).
    public static func hash(_ name: String, salt: [UInt8]) -> String {
        let mac = Crypto.hmacSHA1(key: salt, data: Array(name.utf8))
        return "|1|\(Data(salt).base64EncodedString())|\(Data(mac).base64EncodedString())"
    }
}

/// A whole known_hosts file as lines, able to give back its exact bytes.
public struct KnownHostsFile: Sendable {
    public private(set) var lines: [KnownHostsLine]
    /// Whether the file's last line ended with a newline (kept as it was).
    public private(set) var endsWithNewline: Bool

    public init(bytes: [UInt8]) {
        var lines: [KnownHostsLine] = []
        var parts = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        endsWithNewline = bytes.isEmpty || bytes.last == UInt8(ascii: "\n")
        if bytes.last == UInt8(ascii: "\n") || bytes.isEmpty { parts.removeLast() }
        for (index, raw) in parts.enumerated() {
            lines.append(KnownHostsLine(raw: raw, number: index + 1, content: Self.parse(raw)))
        }
        self.lines = lines
    }

    /// The file's bytes: every line as it was read, plus what was added.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        for (index, line) in lines.enumerated() {
            out += line.raw
            if index < lines.count - 1 || endsWithNewline { out.append(UInt8(ascii: "\n")) }
        }
        return out
    }

    public var entries: [(line: Int, entry: KnownHostEntry)] {
        lines.compactMap { line in line.entry.map { (line.number, $0) } }
    }

    public var malformed: [(line: Int, reason: String)] {
        lines.compactMap { line in
            if case .malformed(let reason) = line.content { return (line.number, reason) }
            return nil
        }
    }

    /// Parses one line's bytes; anything it cannot read is `.malformed`, never an error.
    public static func parse(_ raw: [UInt8]) -> KnownHostsLine.Content {
        guard let text = String(validating: raw, as: UTF8.self) else { return .malformed("not UTF-8 text") }
        // Trim only what OpenSSH skips (space, tab, CR): Foundation's `.whitespaces` also takes
        // U+200B and U+3000, which OpenSSH reads as part of a host name.
        let scalars = text.unicodeScalars
        let isBlank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = scalars.firstIndex(where: { !isBlank($0) }),
            let end = scalars.lastIndex(where: { !isBlank($0) })
        else {
            return .ignorable
        }
        let trimmed = String(scalars[start...end])
        if trimmed.unicodeScalars.first == "#" { return .ignorable }
        // Split on space and tab scalars, as OpenSSH splits bytes: as Characters, a space after
        // a prepend mark (`؀ `) would be no separator at all.
        var fields = trimmed.unicodeScalars.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        var marker: KnownHostEntry.Marker?
        if let first = fields.first, first.hasPrefix("@") {
            guard let known = KnownHostEntry.Marker(rawValue: first) else {
                return .malformed("unknown marker \(first)")
            }
            marker = known
            fields.removeFirst()
        }
        guard fields.count >= 3 else { return .malformed("expected hosts, key type and key") }
        guard let blob = Data(base64Encoded: fields[2]), !blob.isEmpty else {
            return .malformed("the key is not valid base64")
        }
        var reader = SSHWireReader([UInt8](blob))
        guard let innerType = try? reader.text() else { return .malformed("the key blob is truncated") }
        guard innerType == fields[1] || fields[1].hasSuffix("-cert-v01@openssh.com") || marker == .certAuthority else {
            return .malformed("key type \(fields[1]) does not match its key (\(innerType))")
        }
        return .entry(KnownHostEntry(marker: marker, hosts: fields[0], keyType: fields[1], keyBlob: [UInt8](blob)))
    }

    /// Appends a plain entry `name keytype base64`, keeping the file's other bytes.
    public mutating func append(name: String, key: SSHPublicKey) {
        if !lines.isEmpty && !endsWithNewline {
            endsWithNewline = true
        }
        let raw = Array("\(name) \(key.type) \(Data(key.blob).base64EncodedString())".utf8)
        lines.append(KnownHostsLine(raw: raw, number: (lines.last?.number ?? 0) + 1, content: Self.parse(raw)))
        endsWithNewline = true
    }

    /// The outcome of removing a host name: how many entries went, and which lines still
    /// match it only through a wildcard (kept; the user decides).
    public struct Removal: Sendable {
        public var removed = 0
        public var keptPatternLines: [Int] = []
    }

    /// Removes `name` exactly: hashed lines for it and its literal in host lists; a line that
    /// also names other hosts keeps them. Markers, patterns and unreadable lines stay.
    public mutating func remove(name: String) -> Removal {
        var result = Removal()
        var kept: [KnownHostsLine] = []
        for line in lines {
            guard let entry = line.entry, entry.marker == nil else {
                kept.append(line)
                continue
            }
            switch entry.match(name) {
            case .none, .negated:
                kept.append(line)
            case .pattern:
                result.keptPatternLines.append(line.number)
                kept.append(line)
            case .exact:
                result.removed += 1
                if entry.isHashed { continue }
                let lowered = name.lowercased()
                let others = entry.hostPatterns.filter { $0.lowercased() != lowered }
                if others.isEmpty { continue }
                // Rewrite only the host field's bytes (its first occurrence: only blanks precede it);
                // the rest of the line stays byte for byte.
                guard let range = Self.firstRange(of: Array(entry.hosts.utf8), in: line.raw) else {
                    kept.append(line); continue
                }
                var rewritten = line.raw
                rewritten.replaceSubrange(range, with: Array(others.joined(separator: ",").utf8))
                kept.append(KnownHostsLine(raw: rewritten, number: line.number, content: Self.parse(rewritten)))
            }
        }
        // The newline that ended the line before a removed last line belongs to that line: keep it.
        if let last = lines.last, kept.last?.number != last.number { endsWithNewline = true }
        lines = kept
        return result
    }

    /// Where `needle` first occurs in `bytes`, compared byte by byte.
    private static func firstRange(of needle: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard !needle.isEmpty, needle.count <= bytes.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start..<start + needle.count].elementsEqual(needle) {
            return start..<start + needle.count
        }
        return nil
    }
}
