import Foundation

/// An ntfy server and, optionally, one topic on it: `http://` or `https://`, a host, a port, and a
/// path of at most one segment that is a topic name as ntfy takes it (1-64 of `A-Za-z0-9_-`).
/// Nothing else: no user or password in the URL (a token goes in `--push-token-file`), no query,
/// no fragment, no deeper path. Made only by `parse`, so every URL octunnel sends to is one of these.
public struct PushURL: Sendable, Equatable, CustomStringConvertible {
    public let secure: Bool
    /// The host as written (an IPv6 address without its brackets).
    public let host: String
    public let port: Int
    public let topic: String?

    /// The longest topic name ntfy takes.
    public static let topicLimit = 64

    /// Parses `text`; one sentence saying what is wrong otherwise.
    public static func parse(_ text: String) throws(PushError) -> PushURL {
        func bad(_ why: String) -> PushError { .badURL(text: OutsideText.shown(text, limit: 200), reason: why) }
        let lowered = text.lowercased()
        let secure: Bool
        if lowered.hasPrefix("https://") {
            secure = true
        } else if lowered.hasPrefix("http://") {
            secure = false
        } else {
            throw bad("it must start with https:// or http://")
        }
        var rest = Substring(text.dropFirst(secure ? 8 : 7))
        guard !rest.contains(where: { $0 == "?" || $0 == "#" }) else { throw bad("it must have no query or fragment") }
        guard !rest.contains("@") else {
            throw bad("it must hold no user or password (give an access token with --push-token-file)")
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        rest = rest[slash...].drop { $0 == "/" }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        let topic: String? = rest.isEmpty ? nil : String(rest)
        if let topic, !isTopic(topic) {
            throw bad(
                "\"\(OutsideText.shown(topic, limit: 80))\" is not a topic name (1-\(topicLimit) letters, digits, _ or -, one path segment)"
            )
        }
        let hostPort: HostPort
        do { hostPort = try HostPort.parse(String(authority), defaultPort: secure ? 443 : 80) } catch {
            throw bad("its host: \(error.message)")
        }
        let port = hostPort.port
        guard (1...65535).contains(port) else { throw bad("its port must be 1-65535") }
        guard !hostPort.host.isEmpty,
            hostPort.host.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0 != "%" })
        else {
            throw bad("its host must be a name or an address in ASCII")
        }
        return PushURL(secure: secure, host: hostPort.host, port: port, topic: topic)
    }

    /// Whether `text` is a topic name ntfy takes.
    public static func isTopic(_ text: String) -> Bool {
        (1...topicLimit).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F
                    || $0 == 0x2D
            }
    }

    /// The server's root, `https://ntfy.example.org` (the port only when not the scheme's own).
    public var server: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let defaultPort = secure ? 443 : 80
        return (secure ? "https://" : "http://") + name + (port == defaultPort ? "" : ":\(port)")
    }

    /// This server with `topic` (a topic name: `isTopic`).
    public func with(topic: String) -> PushURL { PushURL(secure: secure, host: host, port: port, topic: topic) }

    /// The server alone, without a topic (where JSON messages are published).
    public var serverRoot: PushURL { PushURL(secure: secure, host: host, port: port, topic: nil) }

    /// The full URL as text, with `path` after the topic (`/json?since=…`).
    public func text(_ path: String = "") -> String { server + (topic.map { "/" + $0 } ?? "") + path }

    /// The URL as libcurl gets it.
    var text: String { text() }

    /// The URL as a message shows it: the server and topic only (a topic is a capability: the
    /// reply topic is never shown; callers shorten it).
    var shown: String { server }

    public var description: String { text() }
}

extension PushURL: Codable {
    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try PushURL.parse(text) } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.localizedDescription))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text())
    }
}
