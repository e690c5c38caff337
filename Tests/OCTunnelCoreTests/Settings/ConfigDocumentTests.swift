import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// config.json as a Codable model (`ConfigDocument` of `JSONValue`s, issue 57): whatever the file
/// holds that octunnel does not know (top-level keys, profiles' other sections, a section's other
/// keys, of every JSON kind) is written back with the same meaning by a save and by the write-back
/// of an old section; the values decode as `JSONSerialization` reads them.
@Suite("config.json as a Codable model: unknown keys of every kind kept through a write", .ownThreads)
struct ConfigDocumentTests {
    /// Unknown values of every kind: nested objects and arrays, null, numbers with and without a
    /// fraction, a negative, a large integer, booleans, escapes and non-ASCII.
    static let unknown = #"""
        {"obj": {"b": [1, 2.5, -3, null, true, false, "x\"y\\z\u0001 ✓ 日本"], "a": {}}, "list": [], "big": 9007199254740993,
         "zero": 0, "tiny": 1e-7, "flag": false, "nothing": null, "text": "a/b"}
        """#

    /// A file with the unknown values at the top, in a profile beside its sections, and in a
    /// tunnel section saved before `forwardList` (so the first read writes it back).
    static var file: String {
        """
        {"version": 2, "fromNewer": \(unknown), "profiles": {
          "default": {"later": \(unknown),
                      "tunnel": {"host": "vps.example.com", "port": 22, "username": "me", "remotePort": 18080,
                                 "localPort": 4096, "homePort": 4096, "extra": \(unknown)}},
          "other": {"home": {"host": "h.example.com", "port": 22, "username": "h", "remotePort": 18081, "homePort": 4096,
                             "forwardList": [{"opencode": true, "forward": "127.0.0.1:18081:127.0.0.1:4096"}], "mine": \(unknown)}}}}
        """
    }

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// `value`'s JSON text with sorted keys, to compare meanings.
    func canonical(_ value: Any?) throws -> String {
        let value = try #require(value)
        return String(
            decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]),
            as: UTF8.self)
    }

    @Test("a JSON value decodes as JSONSerialization reads it, and JSONText writes it back as the same JSON")
    func valueRoundTrip() throws {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(Self.unknown.utf8))
        let members = try #require(value.members)
        #expect(members["zero"] == .integer(0) && members["flag"] == .bool(false) && members["nothing"] == .null)
        #expect(members["tiny"] == .number(1e-7) && members["big"] == .integer(9_007_199_254_740_993))
        let written = try #require(JSONText.pretty(value))
        #expect(try canonical(object(written)) == canonical(object(Self.unknown)))
        #expect(try JSONValue(encoding: value) == value)
        #expect(try value.decoded(as: JSONValue.self) == value)
        // Read with the text's order: the same values, and a key written twice has its last one.
        #expect(try JSONValue.parse(Data(Self.unknown.utf8)) == value)
        let twice = try #require(
            try JSONValue.parse(Data(#"{"b": 1, "a": {"y": 2, "x": 3}, "b": "last"}"#.utf8)).members)
        #expect(twice.keys == ["b", "a"] && twice["b"] == .string("last") && twice["a"]?.members?.keys == ["y", "x"])
        #expect(throws: (any Error).self) { try JSONValue.parse(Data(#"{"a": 1"#.utf8)) }
        #expect(throws: (any Error).self) { try JSONValue.parse(Data("5".utf8)) }
    }

    @Test(
        "a save and the write-back of an old section keep every unknown key, at the top, in a profile and in a section, with its value"
    )
    func unknownKeysKept() throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        try directory.write("config.json", Self.file, mode: 0o600)
        let unknown = try canonical(object(Self.unknown))

        let saved = try #require(try SavedSettings.load(from: home)?.tunnel) // writes the old section back
        var settings = try #require(try SavedSettings.load(from: home, profile: ProfileName("other"))?.home)
        settings.homePort = 4097
        try settings.save(to: home, profile: ProfileName("other"))

        let after = try object(readText(home.configPath))
        let profiles = try #require(after["profiles"] as? [String: Any])
        let defaults = try #require(profiles["default"] as? [String: Any])
        let tunnel = try #require(defaults["tunnel"] as? [String: Any])
        let other = try #require((profiles["other"] as? [String: Any])?["home"] as? [String: Any])
        #expect(try canonical(after["fromNewer"]) == unknown)
        #expect(try canonical(defaults["later"]) == unknown)
        #expect(try canonical(tunnel["extra"]) == unknown, "the section written back keeps its unknown key")
        #expect(tunnel["forwardList"] != nil && tunnel["remotePort"] as? Int == 18080)
        #expect(other["mine"] == nil, "a section saved anew is octunnel's own: \(other)")
        #expect(other["homePort"] as? Int == 4097 && after["version"] as? Int == 2)
        #expect(try SavedSettings.load(from: home)?.tunnel == saved)
    }

    @Test(
        "a save keeps every number of the other profiles as the file wrote it: past Int, with a fraction, an exponent")
    func numbersKeptAsWritten() throws {
        // FuzzSettings found it: a 49-digit number in another profile came back as 4.096111111111111e+48.
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        let numbers = ["4096111111111111111111111111111111111111111111111", "2.50", "1E2", "-0.000", "1e-7"]
        try directory.write(
            "config.json",
            """
            {"version": 2, "profiles": {"default": {"tunnel": {"host": "vps.example.com", "port": 22, "username": "d",
              "remotePort": 4096, "localPort": \(numbers[0]), "homePort": 4096, "odd": [\(numbers.joined(separator: ", "))]}},
              "work": {"home": {"host": "10.0.0.1", "port": 22, "username": "w", "remotePort": 5000, "homePort": 4096}}}}
            """, mode: 0o600)
        var work = try #require(try SavedSettings.load(from: home, profile: ProfileName("work"))?.home)
        work.homePort = 4097
        try work.save(to: home, profile: ProfileName("work"))
        let text = try readText(home.configPath).filter { !$0.isWhitespace }
        #expect(text.contains("\"localPort\":\(numbers[0])"), "\(text)")
        #expect(text.contains("\"odd\":[\(numbers.joined(separator: ","))]"), "\(text)")
        #expect(try SavedSettings.load(from: home, profile: ProfileName("work"))?.home?.homePort == 4097)
    }

    /// Where each of `keys` first stands in `text`, as `"key"`.
    func places(_ keys: [String], in text: String) throws -> [Int] {
        try keys.map { key in try #require(text.range(of: "\"\(key)\"")).lowerBound.utf16Offset(in: text) }
    }

    @Test(
        "keys in a hand-made order keep it through the write-back of an old section and a save: top, profiles, section, nested"
    )
    func orderKept() throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        try directory.write(
            "config.json",
            """
            {"zeta": {"y": 1, "b": [{"q": 1, "c": 2}]}, "profiles": {"work": {"tunnel": {"username": "w", "zz": 1,
              "host": "w.example.com", "port": 22, "remotePort": 18080, "localPort": 4097, "homePort": 4096, "aa": 2}},
              "default": {"other": 1, "home": {"host": "h.example.com", "port": 22, "username": "h", "remotePort": 18081, "homePort": 4096,
              "forwardList": [{"opencode": true, "forward": "127.0.0.1:18081:127.0.0.1:4096"}]}}}, "alpha": 1, "version": 2}
            """, mode: 0o600)
        _ = try SavedSettings.load(from: home, profile: ProfileName("work")) // writes work's old tunnel section back
        let written = try readText(home.configPath)
        #expect(
            try places(
                [
                    "zeta", "y", "b", "q", "c", "profiles", "work", "username", "zz", "host", "remotePort", "aa",
                    "forwardList",
                    "default", "other", "home", "alpha", "version",
                ], in: written
            ).isSorted(), "\(written)")
        let settings = try #require(try SavedSettings.load(from: home)?.home)
        try settings.save(to: home, profile: ProfileName("new"))
        let saved = try readText(home.configPath)
        let order = ["zeta", "y", "b", "q", "c", "profiles", "work", "default", "new", "alpha", "version"]
        #expect(try places(order, in: saved).isSorted(), "\(saved)")
    }
}

extension Array where Element: Comparable {
    /// Whether every element is at most the next.
    func isSorted() -> Bool { zip(self, dropFirst()).allSatisfy { $0 <= $1 } }
}
