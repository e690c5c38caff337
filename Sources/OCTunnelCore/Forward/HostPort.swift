import Foundation

/// A host and TCP port, parsed from `host`, `host:2222`, `[::1]:2222` or a bare IPv6 address.
public struct HostPort: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host[:port]`, with IPv6 addresses in brackets when a port follows.
    ///
    /// Works scalar by scalar, not Character by Character: a combining mark after `[`, `]` or
    /// `:` (one grapheme, `]́`) must neither hide the delimiter nor smuggle it into the host.
    public static func parse(_ text: String, defaultPort: Int = 22) throws(TargetParseError) -> HostPort {
        guard !text.isEmpty else { throw .init("empty host") }
        let scalars = text.unicodeScalars
        let host: String
        var port = defaultPort
        if scalars.first == "[" {
            guard let close = scalars.firstIndex(of: "]") else { throw .init("missing ] in \(text)") }
            host = String(scalars[scalars.index(after: scalars.startIndex)..<close])
            let rest = scalars[scalars.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { throw .init("unexpected text after ] in \(text)") }
                port = try parsePort(String(rest.dropFirst()))
            }
            guard !host.isEmpty else { throw .init("empty host in \(text)") }
        } else if scalars.filter({ $0 == ":" }).count > 1 {
            host = text // a bare IPv6 address; a port needs brackets
        } else if let colon = scalars.firstIndex(of: ":") {
            host = String(scalars[..<colon])
            port = try parsePort(String(scalars[scalars.index(after: colon)...]))
        } else {
            host = text
        }
        try validateHost(host)
        return HostPort(host: host, port: port)
    }

    /// Parses a TCP port from 1 to 65535 (0 when `allowZero`).
    public static func parsePort(_ text: String, allowZero: Bool = false) throws(TargetParseError) -> Int {
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int(text)
        else {
            throw .init("port \"\(text)\" is not a number")
        }
        guard (allowZero ? 0 : 1)...65535 ~= value else { throw .init("port \(value) is out of range (1-65535)") }
        return value
    }

    /// Scalars a host may not contain: what a shell, ssh or known_hosts gives meaning to (`~`
    /// too: a shell expands it at the start of a word, `W=~user:18084` in a forced command).
    private static let forbiddenInHost = Set(" \t\r\n,/\\@[]*?!'\"`$;|&<>(){}#~".unicodeScalars)

    /// Checks each Unicode scalar (a grapheme such as `'́` still holds a bare `'`); any Unicode
    /// white space (U+00A0, U+3000, …) is refused too, as known_hosts trims it, and so is every
    /// format character (bidi overrides such as U+202E, zero-width ones such as U+200B): a
    /// printed key line would not read as what it is. The one check of every host that reaches
    /// a connection, a listen, a key line or a forced command.
    public static func validateHost(_ host: String) throws(TargetParseError) {
        guard !host.isEmpty else { throw .init("empty host") }
        guard host.utf8.count <= 253 else { throw .init("host name too long") }
        if let bad = host.unicodeScalars.first(where: { $0.properties.generalCategory == .format }) {
            throw .init(
                "host \"\(OutsideText.shown(host))\" contains \(unicodeName(bad)), "
                    + "an invisible format character (it reorders or hides what is printed)")
        }
        if let bad = host.unicodeScalars.first(where: {
            forbiddenInHost.contains($0) || $0.value < 0x20 || $0.value == 0x7f
                || (0x80...0x9f).contains($0.value) || $0.properties.isWhitespace
        }) {
            throw .init("host \"\(OutsideText.shown(host))\" contains \"\(OutsideText.shown(String(bad)))\"")
        }
        if host.unicodeScalars.first == "-" { throw .init("host \"\(host)\" starts with -") }
    }

    /// `U+202E`: how a message names a scalar it refuses.
    static func unicodeName(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// `host` for port 22, `[host]:port` otherwise: the spelling OpenSSH's known_hosts uses.
    public var knownHostsName: String {
        port == 22 ? host.lowercased() : "[\(host.lowercased())]:\(port)"
    }

    /// `host:port`, with IPv6 addresses in brackets.
    public var description: String {
        host.unicodeScalars.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// A target parse failure, with a sentence saying what is wrong.
public struct TargetParseError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// The message quotes what was typed or read from a file: it is made safe to print here,
    /// once for every message (`OutsideText`: no control characters reach the terminal).
    init(_ message: String) { self.message = OutsideText.shown(message, limit: 1024) }
    public var description: String { message }
}
