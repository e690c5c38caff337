import Foundation

/// One authorized_keys line octunnel printed, for either role: the model the line is rendered
/// from (`line`) and read back into (`parse`), so printing, installing, listing, rotating and
/// revoking all agree on what octunnel's line is.
///
/// The line: `restrict,port-forwarding`, one `permitopen` per forward (the laptop's, `.tunnel`)
/// or one `permitlisten` per listen (the home's), the other kind on a port nothing uses, and a
/// forced command `exec /bin/sh -c '…'` whose program starts with `K=<tag> P=<predecessor>
/// A=<yyyymmdd> F=<file>` and answers the rotation verbs (`KeyRotationProgram`); after them, the
/// laptop's refuses everything (as `/bin/false` did) and the home's is the port-reclaim program.
/// Older octunnels printed lines without the parameters (`command="/bin/false"`, or the
/// reclaim program alone): `parse` still recognises them, with `tag` nil.
public struct OctunnelKeyLine: Equatable, Sendable {
    /// Whose line: the laptop's (`tunnel up`) or the home machine's (`home up`).
    public let role: Role
    /// The `permitopen` targets (`.tunnel`) or `permitlisten` listens (`.home`), in order.
    public let ends: [HostPort]
    public let key: SSHPublicKey
    /// The first 16 hex digits of the key blob's SHA-256 as the line says it (`tag(for:)`); nil
    /// for a line printed before rotation existed (or printed without a key at hand).
    public let tag: String?
    /// The tag of the key this one replaced (`octunnel-rotate-add`), nil for a first key.
    public let predecessor: String?
    /// The day the line was printed or added, `yyyymmdd` in UTC; nil for older lines.
    public let added: String?
    /// The authorized_keys file the line's program edits (relative to $HOME, or absolute); nil for older lines.
    public let file: String?
    /// The key's comment, as the line carries it.
    public var comment: String { key.comment }

    /// Where sshd looks by default, relative to the home directory.
    public static let defaultFile = ".ssh/authorized_keys"
    /// The longest line `parse` reads (and `AuthorizedKeysScript.list` prints): the laptop's line is about
    /// 5.1 KB, the home's 10.1 KB (issue 55); sshd's own fixed buffer, where it has one, is 16384 bytes (SSH_MAX_PUBKEY_BYTES).
    public static let longestLine = 16 * 1024

    /// The line octunnel prints for `key` today: its tag derived from the key, `added` today
    /// (UTC) unless given.
    public init(
        role: Role, ends: [HostPort], key: SSHPublicKey, predecessor: String? = nil, added: String? = nil,
        file: String = defaultFile
    ) {
        self.init(
            role: role, ends: ends, key: key, tag: Self.tag(for: key), predecessor: predecessor,
            added: added ?? Self.today(), file: file)
    }

    init(
        role: Role, ends: [HostPort], key: SSHPublicKey, tag: String?, predecessor: String?, added: String?,
        file: String?
    ) {
        self.role = role
        self.ends = ends
        self.key = key
        self.tag = tag
        self.predecessor = predecessor
        self.added = added
        self.file = file
    }

    /// The key's tag: the first 16 lower-case hex digits of the SHA-256 of its blob (the bytes
    /// the base64 encodes), as `base64 -d | sha256sum` gives them on the VPS. The same key always
    /// gives the same tag, so printing a key's line twice prints the same line (on the same day).
    public static func tag(for key: SSHPublicKey) -> String {
        hex(Crypto.sha256(key.blob).prefix(8))
    }

    /// The tag of the key whose fingerprint is `fingerprint` (`SHA256:` and the unpadded base64
    /// of the same SHA-256 the tag starts), nil for anything else.
    public static func tag(fingerprint: String) -> String? {
        guard fingerprint.hasPrefix("SHA256:") else { return nil }
        let digits = String(fingerprint.dropFirst(7))
        guard digits.utf8.count == 43, let digest = Data(base64Encoded: digits + "=") else { return nil }
        return hex(digest.prefix(8))
    }

    /// Today in UTC as `yyyymmdd`, the form of `A=`.
    public static func today(_ now: Date = Date()) -> String {
        String(UTCTimestamp.string(from: now).prefix(10).filter { $0 != "-" })
    }

    /// Whether `file` can stand in the program unquoted: letters, digits, `.`, `_`, `-` and `/`,
    /// 1 to 255 bytes. Any other file is rendered as `defaultFile`.
    public static func isSafeFile(_ file: String) -> Bool {
        !file.isEmpty && file.utf8.count <= 255 && file.unicodeScalars.allSatisfy { fileScalars.contains($0) }
    }

    /// The line for authorized_keys: options, then the key's line (`type base64 comment`). For a
    /// line read back in an older form, the line octunnel prints for it today.
    public var line: String { options + " " + key.line }

    /// The line's options, its forced command among them.
    public var options: String {
        Self.options(
            role: role, ends: ends,
            command: Self.forcedCommand(
                role: role, ends: ends, tag: tag ?? Self.tag(for: key),
                predecessor: predecessor, added: added ?? Self.today(),
                file: file ?? Self.defaultFile))
    }

    static func options(role: Role, ends: [HostPort], command: String) -> String {
        let (permit, nowhere) = role == .tunnel ? ("permitopen", "permitlisten") : ("permitlisten", "permitopen")
        let permits = ends.map { "\(permit)=\"\($0)\"" }.joined(separator: ",")
        return "restrict,port-forwarding,\(permits),\(nowhere)=\"\(authorizedKeysNowhere)\",command=\"\(command)\""
    }

    /// The value of the line's `command="…"` option: the program run by /bin/sh whatever the
    /// user's login shell (sshd runs a forced command with it), with `"` escaped as sshd's option
    /// parser wants (`\"`; no other escape exists there). A nil `tag` renders `K=` empty: the
    /// line works, but its rotation verbs refuse (`reason=untagged`). A `predecessor` or `added`
    /// not of their form is left out (empty, today); an unsafe `file` is `defaultFile`.
    public static func forcedCommand(
        role: Role, ends: [HostPort], tag: String?, predecessor: String? = nil, added: String,
        file: String = defaultFile
    ) -> String {
        let rest = role == .tunnel ? KeyRotationProgram.refusal : PortReclaimProgram.program(listens: ends)
        let program = KeyRotationProgram.program(
            tag: tag.flatMap { isTag($0) ? $0 : nil },
            predecessor: predecessor.flatMap { isTag($0) ? $0 : nil },
            added: isDay(added) ? added : today(), file: isSafeFile(file) ? file : defaultFile, then: rest)
        return ("exec /bin/sh -c '" + program + "'").replacingScalars("\"", with: "\\\"")
    }

    /// Reads an authorized_keys line back; nil for any line that is not octunnel's (another
    /// key's, a hand-made one, a line longer than `longestLine`). A CR or LF at its end is ignored.
    public static func parse(_ line: String) -> OctunnelKeyLine? {
        guard line.utf8.count <= longestLine else { return nil }
        var scalars = Array(line.unicodeScalars)
        while let last = scalars.last, last == "\n" || last == "\r" { scalars.removeLast() }
        guard let split = optionsEnd(scalars) else { return nil }
        let rest = String(String.UnicodeScalarView(scalars[(split + 1)...].drop { $0 == " " || $0 == "\t" }))
        guard let key = SSHPublicKey.parse(line: rest), let options = options(Array(scalars[..<split])),
            options.count >= 4, options[0].name == "restrict", options[0].value == nil,
            options[1].name == "port-forwarding", options[1].value == nil,
            let last = options.last, last.name == "command", let command = last.value
        else { return nil }
        var opens: [String] = [], listens: [String] = []
        for option in options.dropFirst(2).dropLast() {
            guard let value = option.value else { return nil }
            switch option.name {
            case "permitopen": opens.append(value)
            case "permitlisten": listens.append(value)
            default: return nil
            }
        }
        let role: Role
        if listens == [authorizedKeysNowhere], !opens.isEmpty, !opens.contains(authorizedKeysNowhere) {
            role = .tunnel
        } else if opens == [authorizedKeysNowhere], !listens.isEmpty, !listens.contains(authorizedKeysNowhere) {
            role = .home
        } else {
            return nil
        }
        let texts = role == .tunnel ? opens : listens
        var ends: [HostPort] = []
        for text in texts {
            guard let end = try? HostPort.parse(text) else { return nil }
            ends.append(end)
        }
        if command == "/bin/false" {
            return OctunnelKeyLine(role: role, ends: ends, key: key, tag: nil, predecessor: nil, added: nil, file: nil)
        }
        let opening = "exec /bin/sh -c '"
        guard command.hasPrefix(opening), command.hasSuffix("'"), command.utf8.count > opening.utf8.count + 1 else {
            return nil
        }
        let program = command.dropFirst(opening.count).dropLast()
        // A line printed between issue 19 and issue 47: the port-reclaim program alone.
        if role == .home, program.hasPrefix("P=/proc ") {
            return OctunnelKeyLine(role: role, ends: ends, key: key, tag: nil, predecessor: nil, added: nil, file: nil)
        }
        guard program.hasPrefix("K="), let semicolon = program.firstIndex(of: ";") else { return nil }
        let words = program[..<semicolon].split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 4, words[0].hasPrefix("K="), words[1].hasPrefix("P="), words[2].hasPrefix("A="),
            words[3].hasPrefix("F=")
        else { return nil }
        let tag = String(words[0].dropFirst(2)), predecessor = String(words[1].dropFirst(2))
        let added = String(words[2].dropFirst(2)), file = String(words[3].dropFirst(2))
        guard tag.isEmpty || isTag(tag), predecessor.isEmpty || isTag(predecessor), isDay(added), isSafeFile(file)
        else { return nil }
        // The role's own program after the verbs: the laptop's refusal, or the reclaim program.
        let own =
            role == .tunnel
            ? program.hasSuffix(KeyRotationProgram.refusal) : program.contains(PortReclaimProgram.reclaimVerb)
        guard own else { return nil }
        return OctunnelKeyLine(
            role: role, ends: ends, key: key, tag: tag.isEmpty ? nil : tag,
            predecessor: predecessor.isEmpty ? nil : predecessor,
            added: added, file: file)
    }

    /// Where the options end: the first space or tab outside double quotes (`\"` inside quotes
    /// is a quote, as sshd reads it); nil when the line has no options or a quote never closes.
    private static func optionsEnd(_ scalars: [Unicode.Scalar]) -> Int? {
        var quoted = false
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if quoted, scalar == "\\", index + 1 < scalars.count, scalars[index + 1] == "\"" {
                index += 2
                continue
            }
            if scalar == "\"" {
                quoted.toggle()
            } else if !quoted, scalar == " " || scalar == "\t" {
                return index == 0 ? nil : index
            }
            index += 1
        }
        return nil
    }

    /// The options, split on commas outside quotes: `name` or `name="value"` with the value
    /// dequoted as sshd does (`\"` is `"`, anything else itself); nil for any other shape.
    private static func options(_ scalars: [Unicode.Scalar]) -> [(name: String, value: String?)]? {
        var result: [(name: String, value: String?)] = []
        var index = 0
        while index < scalars.count {
            var name = String.UnicodeScalarView()
            while index < scalars.count, scalars[index] != ",", scalars[index] != "=" {
                name.append(scalars[index])
                index += 1
            }
            var value: String?
            if index < scalars.count, scalars[index] == "=" {
                guard index + 1 < scalars.count, scalars[index + 1] == "\"" else { return nil }
                index += 2
                var text = String.UnicodeScalarView()
                var closed = false
                while index < scalars.count {
                    if scalars[index] == "\\", index + 1 < scalars.count, scalars[index + 1] == "\"" {
                        text.append("\"")
                        index += 2
                        continue
                    }
                    if scalars[index] == "\"" {
                        closed = true
                        index += 1
                        break
                    }
                    text.append(scalars[index])
                    index += 1
                }
                guard closed else { return nil }
                value = String(text)
            }
            guard !name.isEmpty else { return nil }
            result.append((String(name), value))
            if index < scalars.count {
                guard scalars[index] == "," else { return nil }
                index += 1
                guard index < scalars.count else { return nil }
            }
        }
        return result
    }

    private static let fileScalars = Set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/".unicodeScalars)

    /// 16 lower-case hex digits.
    static func isTag(_ text: String) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// 8 digits.
    static func isDay(_ text: String) -> Bool {
        text.utf8.count == 8 && text.utf8.allSatisfy { (48...57).contains($0) }
    }

    private static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var text = String.UnicodeScalarView()
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(text)
    }
}
