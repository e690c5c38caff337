import Foundation

/// The plain cases of an OpenSSH client config file, read without the ssh client: `Host`
/// blocks (patterns, `*`/`?` wildcards, `!` negation), first value wins, as ssh_config(5) says.
/// `Match` and `Include` are not followed; what is not applied is listed in `ignored`.
public struct SSHConfigFile: Sendable {
    /// One `Keyword arguments` line, keyword lowercased.
    struct Directive: Sendable {
        let keyword: String
        let arguments: [String]
        let line: Int
    }

    /// What the file says for one host name.
    public struct Settings: Sendable, Equatable {
        /// Lowercased keyword to its value (arguments joined by a space), first one wins.
        public var values: [String: String] = [:]
        /// Every IdentityFile, in order (ssh tries each).
        public var identityFiles: [String] = []
        /// Keywords that applied to this host but that octunnel does not use, in file order, as
        /// `OutsideText` shows them (they are printed in a note).
        public var ignored: [String] = []
    }

    /// The keywords octunnel applies (or refuses on purpose, like ProxyJump).
    static let understood: Set<String> = [
        "host", "hostname", "user", "port", "identityfile", "hostkeyalias",
        "proxyjump", "proxycommand", "userknownhostsfile", "globalknownhostsfile",
        "stricthostkeychecking",
    ]

    let directives: [Directive]

    public init(text: String) {
        var directives: [Directive] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard let directive = Self.parseLine(String(raw), number: index + 1) else { continue }
            directives.append(directive)
        }
        self.directives = directives
    }

    /// `Keyword args`, `Keyword=args` or `Keyword = args`; arguments split on blanks, "double quotes" kept together.
    static func parseLine(_ raw: String, number: Int) -> Directive? {
        let line = raw.trimmingCharacters(in: CharacterSet(charactersIn: " \t\r"))
        guard !line.isEmpty, !line.hasPrefix("#") else { return nil }
        let scalars = Array(line.unicodeScalars)
        var index = 0
        while index < scalars.count, scalars[index] != " ", scalars[index] != "\t", scalars[index] != "=" { index += 1 }
        let keyword = String(String.UnicodeScalarView(scalars[..<index])).lowercased()
        while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
        if index < scalars.count, scalars[index] == "=" { index += 1 }
        var arguments: [String] = []
        var current = String.UnicodeScalarView()
        var quoted = false, started = false
        for scalar in scalars[index...] {
            if scalar == "\"" { quoted.toggle(); started = true; continue }
            if !quoted && (scalar == " " || scalar == "\t") {
                if started { arguments.append(String(current)); current = .init(); started = false }
                continue
            }
            if !quoted && scalar == "#" && !started { break }
            current.append(scalar)
            started = true
        }
        if started { arguments.append(String(current)) }
        return Directive(keyword: keyword, arguments: arguments, line: number)
    }

    /// Whether a `Host` line's patterns select `name`: one negated match rules it out, else any match.
    static func hostLineMatches(_ patterns: [String], name: String) -> Bool {
        let name = name.lowercased()
        var matched = false
        for var pattern in patterns.map({ $0.lowercased() }) {
            let negated = pattern.hasPrefix("!")
            if negated { pattern.removeFirst() }
            guard wildcardMatch(Array(pattern.utf8), Array(name.utf8)) else { continue }
            if negated { return false }
            matched = true
        }
        return matched
    }

    /// The settings that apply to `name` (the host as typed on the command line).
    public func settings(for name: String) -> Settings {
        var settings = Settings()
        var active = true
        func ignore(_ keyword: String) {
            // Listed in a note for the user: the file's text, shown as outside text (no controls).
            let shown = OutsideText.shown(keyword, limit: 64)
            if !settings.ignored.contains(shown) { settings.ignored.append(shown) }
        }
        for directive in directives {
            switch directive.keyword {
            case "host":
                active = Self.hostLineMatches(directive.arguments, name: name)
                continue
            case "match":
                // Its criteria (exec, user, canonical…) need ssh itself: its block is not applied.
                ignore("match")
                active = false
                continue
            case "include":
                ignore("include")
                continue
            default:
                break
            }
            guard active else { continue }
            guard Self.understood.contains(directive.keyword) else { ignore(directive.keyword); continue }
            guard !directive.arguments.isEmpty else { continue }
            if directive.keyword == "identityfile" {
                settings.identityFiles.append(directive.arguments.joined(separator: " "))
            } else if settings.values[directive.keyword] == nil {
                settings.values[directive.keyword] = directive.arguments.joined(separator: " ")
            }
        }
        return settings
    }
}
