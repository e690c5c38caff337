import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// config.json keeps one list of forwards per section (`forwardList`, issue 49), with the keys
/// older versions read beside it as its copy: a file an older version saved reads as before and
/// is written back in the new shape once; a file this version saves reads with the old
/// decoding; `forwardList` is the list a person edits: a copy that says otherwise is overruled
/// by it, said once, and rewritten; a copy removed by hand is not missed.
@Suite("config.json's forwardList: one list, its copy for older versions, old files written back", .ownThreads)
struct SavedForwardListTests {
    /// What the version before `forwardList` wrote (`tunnel up --save` and `home up --save` of two
    /// profiles, -L/-R forwards and ports off their defaults), byte for byte, plus keys it did not know.
    static let oldFile = """
        {
          "note" : "kept",
          "profiles" : {
            "default" : {
              "home" : {
                "agent" : true,
                "forwards" : [
                  "127.0.0.1:18082:127.0.0.1:3000"
                ],
                "homeHost" : "192.168.1.5",
                "homePort" : 4200,
                "host" : "vps.example.com",
                "port" : 2222,
                "remoteHost" : "127.0.0.2",
                "remotePort" : 18091,
                "username" : "home"
              },
              "tunnel" : {
                "forwards" : [
                  "127.0.0.1:3000:127.0.0.1:18082",
                  "[::1]:5173:127.0.0.1:18083"
                ],
                "homePort" : 4100,
                "host" : "vps.example.com",
                "localPort" : 5096,
                "notifyTimeout" : 20,
                "pairPort" : false,
                "passwordFile" : "/home/me/.pw",
                "port" : 2222,
                "remoteHost" : "::1",
                "remotePort" : 18091,
                "username" : "me"
              }
            },
            "work" : {
              "tunnel" : {
                "homePort" : 4096,
                "host" : "work.example.com",
                "localPort" : 4097,
                "port" : 22,
                "remotePort" : 18080,
                "unknown" : 1,
                "username" : "w"
              }
            }
          },
          "version" : 2
        }

        """

    static let work = try! ProfileName("work")

    /// The settings the old file held, as this version names them.
    static let oldTunnel = TunnelSettings(
        host: "vps.example.com", port: 2222, username: "me", remotePort: 18091, localPort: 5096, homePort: 4100,
        remoteHost: "::1",
        passwordFile: "/home/me/.pw",
        others: [
            Forward(
                direction: .local, listen: HostPort(host: "127.0.0.1", port: 3000),
                target: HostPort(host: "127.0.0.1", port: 18082)),
            Forward(
                direction: .local, listen: HostPort(host: "::1", port: 5173),
                target: HostPort(host: "127.0.0.1", port: 18083)),
        ],
        notifications: NotifySettings(notifyTimeout: 20), pairPort: .off)
    static let oldHome = HomeSettings(
        host: "vps.example.com", port: 2222, username: "home", remotePort: 18091, homePort: 4200,
        remoteHost: "127.0.0.2",
        homeHost: "192.168.1.5", agent: true,
        others: [
            Forward(
                direction: .remote, listen: HostPort(host: "127.0.0.1", port: 18082),
                target: HostPort(host: "127.0.0.1", port: 3000))
        ])
    static let oldWork = TunnelSettings(
        host: "work.example.com", port: 22, username: "w", remotePort: 18080, localPort: 4097, homePort: 4096)

    /// `profiles.PROFILE.ROLE` of a config.json's text.
    func section(_ text: String, _ profile: String, _ role: String) throws -> [String: Any] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        return try #require(
            ((object["profiles"] as? [String: Any])?[profile] as? [String: Any])?[role] as? [String: Any])
    }

    func canonical(_ value: Any) throws -> String {
        String(
            decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]),
            as: UTF8.self)
    }

    @Test(
        "an old file reads the same settings, and after one read is in the new shape: every old key as it was, forwardList beside them"
    )
    func anOldFileIsReadAsBeforeAndWrittenBackOnce() throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        // The file is exactly what config.json's writer lays out.
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(Self.oldFile.utf8)) as? [String: Any])
        try #require(JSONText.pretty(parsed).map { $0 + "\n" } == Self.oldFile)
        try directory.write("config.json", Self.oldFile, mode: 0o600)

        let saved = try #require(try SavedSettings.load(from: home))
        #expect(saved == SavedSettings(tunnel: Self.oldTunnel, home: Self.oldHome))
        let resolved = try ResolvedSettings.resolve(flags: SettingsFlags(), saved: saved, sshConfig: nil, role: .tunnel)
        #expect(
            resolved.forwards.map(\.description)
                == [
                    "-L 127.0.0.1:5096:[::1]:18091", "-L 127.0.0.1:3000:127.0.0.1:18082",
                    "-L [::1]:5173:127.0.0.1:18083",
                ])
        #expect(
            (resolved.remoteHost, resolved.remotePort, resolved.localPort, resolved.homePort) == (
                "::1", 18091, 5096, 4100
            ))
        let homeRun = try ResolvedSettings.resolve(flags: SettingsFlags(), saved: saved, sshConfig: nil, role: .home)
        #expect(
            homeRun.forwards.map(\.description) == [
                "-R 127.0.0.2:18091:192.168.1.5:4200", "-R 127.0.0.1:18082:127.0.0.1:3000",
            ])

        let written = try readText(home.configPath)
        #expect(written != Self.oldFile, "read once, the file is written back")
        #expect(try mode(of: home.configPath) == 0o600)
        let lists: [(String, String, [[String: Any]])] = [
            (
                "default", "tunnel",
                [
                    ["opencode": true, "forward": "127.0.0.1:5096:[::1]:18091"],
                    ["forward": "127.0.0.1:3000:127.0.0.1:18082"], ["forward": "[::1]:5173:127.0.0.1:18083"],
                ]
            ),
            (
                "default", "home",
                [
                    ["opencode": true, "forward": "127.0.0.2:18091:192.168.1.5:4200"],
                    ["forward": "127.0.0.1:18082:127.0.0.1:3000"],
                ]
            ),
            ("work", "tunnel", [["opencode": true, "forward": "127.0.0.1:4097:127.0.0.1:18080"]]),
        ]
        for (profile, role, list) in lists {
            var expected = try section(Self.oldFile, profile, role)
            expected["forwardList"] = list
            #expect(try canonical(section(written, profile, role)) == canonical(expected), "\(profile).\(role)")
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any])
        #expect(object["note"] as? String == "kept")
        #expect(object["version"] as? Int == 2)

        // The new shape reads the same; a second read leaves it as it is.
        #expect(try SavedSettings.load(from: home) == saved)
        #expect(try SavedSettings.load(from: home, profile: Self.work) == SavedSettings(tunnel: Self.oldWork))
        #expect(try readText(home.configPath) == written)
    }

    @Test("a file this version saves reads with the decoding of the version before: its copy of the list is right")
    func aNewFileReadsWithTheOldDecoding() throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        try Self.oldTunnel.save(to: home)
        try Self.oldHome.save(to: home)
        let text = try readText(home.configPath)

        let tunnel = try JSONSerialization.data(withJSONObject: section(text, "default", "tunnel"))
        #expect(
            try JSONDecoder().decode(OldSignIn.self, from: tunnel)
                == OldSignIn(
                    host: "vps.example.com", port: 2222, username: "me", agent: nil,
                    passwordFile: "/home/me/.pw"))
        #expect(
            try JSONDecoder().decode(OldPorts.self, from: tunnel)
                == OldPorts(
                    remotePort: 18091, homePort: 4100, remoteHost: "::1",
                    forwards: ["127.0.0.1:3000:127.0.0.1:18082", "[::1]:5173:127.0.0.1:18083"]))
        #expect(
            try JSONDecoder().decode(OldTunnelOnly.self, from: tunnel)
                == OldTunnelOnly(
                    localPort: 5096, notify: nil, notifyCommand: nil,
                    notifyTimeout: 20, pairPort: false))
        let homeSection = try JSONSerialization.data(withJSONObject: section(text, "default", "home"))
        #expect(
            try JSONDecoder().decode(OldSignIn.self, from: homeSection)
                == OldSignIn(
                    host: "vps.example.com", port: 2222, username: "home",
                    agent: true, passwordFile: nil))
        #expect(
            try JSONDecoder().decode(OldPorts.self, from: homeSection)
                == OldPorts(
                    remotePort: 18091, homePort: 4200, remoteHost: "127.0.0.2",
                    forwards: ["127.0.0.1:18082:127.0.0.1:3000"]))
        #expect(try JSONDecoder().decode(OldHomeOnly.self, from: homeSection) == OldHomeOnly(homeHost: "192.168.1.5"))

        // Defaults are left out of the copy as the older version left them out.
        try TunnelSettings(host: "v", port: 22, username: "u", remotePort: 18080, localPort: 4096, homePort: 4096).save(
            to: home, profile: Self.work)
        let plain = try section(readText(home.configPath), "work", "tunnel")
        #expect(plain["remoteHost"] == nil && plain["forwards"] == nil, "\(plain)")
        #expect(
            try canonical(plain["forwardList"] as Any)
                == canonical([["opencode": true, "forward": "127.0.0.1:4096:127.0.0.1:18080"]]))
    }

    /// A file both sections saved by this version, with `edit` applied to `role`'s section; its text.
    func savedThenEdited(
        _ directory: TempDirectory, role: String, _ edit: (inout [String: Any]) throws -> Void
    ) throws -> String {
        let home = OctunnelDirectory(path: directory.path)
        try Self.oldTunnel.save(to: home)
        try Self.oldHome.save(to: home)
        var object = try #require(
            try JSONSerialization.jsonObject(with: Data(readText(home.configPath).utf8)) as? [String: Any])
        var sections = try #require((object["profiles"] as? [String: Any])?["default"] as? [String: Any])
        var edited = try #require(sections[role] as? [String: Any])
        try edit(&edited)
        sections[role] = edited
        object["profiles"] = ["default": sections]
        let text = try #require(JSONText.pretty(object))
        try directory.write("config.json", text, mode: 0o600)
        return text
    }

    @Test(
        "a copy key edited by hand against the list: forwardList wins, said once as a warning naming the key and forwardList, the copy rewritten from the list",
        arguments: [
            ("tunnel", "remotePort", "18092"),
            ("tunnel", "localPort", "4000"),
            ("tunnel", "remoteHost", "\"127.0.0.1\""),
            ("tunnel", "forwards", "[\"127.0.0.1:3001:127.0.0.1:18082\"]"),
            ("tunnel", "remotePort", "\"a word\""),
            ("home", "homePort", "4201"),
            ("home", "homeHost", "\"127.0.0.1\""),
            ("home", "forwards", "[]"),
        ])
    func aCopyThatDisagreesIsOverruled(role: String, key: String, value: String) throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        let saved = try savedThenEdited(directory, role: role) { section in
            section[key] = try JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
        }
        var warnings: [String] = []
        let contents = try #require(try ConfigFile(directory: home).load(warn: { warnings.append($0) }))
        #expect(try contents.settings(of: .default) == SavedSettings(tunnel: Self.oldTunnel, home: Self.oldHome))
        #expect(warnings.count == 1, "\(warnings)")
        let warning = try #require(warnings.first)
        #expect(!warning.contains("\n") && warning.hasPrefix("octunnel: warning: \(home.configPath): "), "\(warning)")
        #expect(
            warning.contains("\"profiles.default.\(role).\(key)\" is ")
                && warning.contains("\"profiles.default.\(role).forwardList\" says"), "\(warning)")
        if key == "remotePort" && value == "18092" {
            #expect(
                warning.hasSuffix(
                    #": "profiles.default.tunnel.remotePort" is 18092 but "profiles.default.tunnel.forwardList" says opencode 127.0.0.1:5096:[::1]:18091: octunnel follows forwardList (remotePort is only its copy for older versions) and rewrites the copy to match"#
                ))
        }

        // Written back: the copy says the list again, every other key as saved; said once.
        let written = try readText(home.configPath)
        #expect(written != saved)
        try Self.oldTunnel.save(to: OctunnelDirectory(path: directory.file("fresh")))
        try Self.oldHome.save(to: OctunnelDirectory(path: directory.file("fresh")))
        let fresh = try readText(directory.file("fresh/config.json"))
        #expect(try canonical(section(written, "default", role)) == canonical(section(fresh, "default", role)))
        warnings = []
        #expect(
            try ConfigFile(directory: home).load(warn: { warnings.append($0) })?.settings(of: .default)
                == SavedSettings(tunnel: Self.oldTunnel, home: Self.oldHome))
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(try readText(home.configPath) == written)
    }

    @Test(
        "forwardList alone, the old keys removed by hand: read from the list, nothing said, the file left as the person wrote it",
        arguments: ["tunnel", "home"])
    func aListWithoutItsCopyReads(role: String) throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        let text = try savedThenEdited(directory, role: role) { section in
            for key in ["remotePort", "localPort", "remoteHost", "homeHost", "forwards"]
                + (role == "home" ? ["homePort"] : [])
            {
                section[key] = nil
            }
        }
        #expect(try section(text, "default", role)["remotePort"] == nil)
        var warnings: [String] = []
        let contents = try #require(try ConfigFile(directory: home).load(warn: { warnings.append($0) }))
        #expect(try contents.settings(of: .default) == SavedSettings(tunnel: Self.oldTunnel, home: Self.oldHome))
        #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: Self.oldTunnel, home: Self.oldHome))
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(try readText(home.configPath) == text)
    }

    @Test("forwardList edited by hand, the old keys left as they were: the edit is what runs")
    func anEditedListIsWhatRuns() throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        _ = try savedThenEdited(directory, role: "tunnel") { section in
            section["forwardList"] = [
                ["opencode": true, "forward": "127.0.0.1:6000:127.0.0.1:19000"],
                ["forward": "127.0.0.1:3000:127.0.0.1:18082"],
            ]
        }
        var warnings: [String] = []
        let settings = try #require(
            try ConfigFile(directory: home).load(warn: { warnings.append($0) })?.settings(of: .default)?.tunnel)
        #expect(
            settings.forwards.map(\.description) == [
                "-L 127.0.0.1:6000:127.0.0.1:19000", "-L 127.0.0.1:3000:127.0.0.1:18082",
            ])
        #expect(
            warnings.count == 1 && warnings[0].contains("\"profiles.default.tunnel.remotePort\" is 18091 but"),
            "\(warnings)")
        // The copy now says the edit: an older version runs it too.
        let tunnel = try JSONSerialization.data(withJSONObject: section(readText(home.configPath), "default", "tunnel"))
        #expect(
            try JSONDecoder().decode(OldPorts.self, from: tunnel)
                == OldPorts(
                    remotePort: 19000, homePort: 4100, remoteHost: nil,
                    forwards: ["127.0.0.1:3000:127.0.0.1:18082"]))
    }

    @Test("forwardList without exactly one OpenCode forward, or a saved --bind, is refused (65)")
    func aListWithoutOneOpenCodeForwardIsRefused() throws {
        let base = #""host":"v","port":22,"username":"u","remotePort":18080,"localPort":4096,"homePort":4096"#
        let lists = [
            #"[{"forward":"127.0.0.1:4096:127.0.0.1:18080"}]"#,
            #"[{"opencode":true,"forward":"127.0.0.1:4096:127.0.0.1:18080"},{"opencode":true,"forward":"127.0.0.1:4097:127.0.0.1:18080"}]"#,
            #"[{"opencode":true,"forward":"0.0.0.0:4096:127.0.0.1:18080"}]"#,
            #"[{"opencode":true,"forward":"4096:127.0.0.1"}]"#,
        ]
        for list in lists {
            let directory = try TempDirectory()
            try directory.write(
                "config.json",
                #"{"version":2,"profiles":{"default":{"tunnel":{"# + base + #","forwardList":"# + list + "}}}}")
            #expect(
                performing: { try SavedSettings.load(from: OctunnelDirectory(path: directory.path)) },
                throws: { error in
                    guard let error = error as? LocalFileError, case .badConfig = error else { return false }
                    return error.exitStatus.rawValue == 65
                })
        }
    }

    @Test("an old file that cannot be written back (its lock cannot be taken) still reads, and stays as it was")
    func aFailedWriteBackDoesNotFailTheRead() throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        try directory.write("config.json", Self.oldFile, mode: 0o600)
        // A directory where the lock file goes: the write-back cannot lock, even as root.
        try FileManager.default.createDirectory(atPath: home.configPath + ".lock", withIntermediateDirectories: false)

        #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: Self.oldTunnel, home: Self.oldHome))
        #expect(try SavedSettings.all(in: home).map(\.profile) == [.default, Self.work])
        #expect(try readText(home.configPath) == Self.oldFile)
    }

    @Test("an old file in a home open to others is only read: reading neither tightens the home nor writes in it")
    func anOpenHomeIsNotWrittenIn() throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        try directory.write("config.json", Self.oldFile, mode: 0o600)
        try #require(chmod(directory.path, 0o755) == 0)

        #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: Self.oldTunnel, home: Self.oldHome))
        #expect(try readText(home.configPath) == Self.oldFile)
        #expect(try mode(of: directory.path) & 0o777 == 0o755)
        #expect(!FileManager.default.fileExists(atPath: home.configPath + ".lock"))
    }

    @Test("an old file with a section that is not valid is not written back: reading it is refused, the file untouched")
    func anInvalidFileIsNotWrittenBack() throws {
        let directory = try TempDirectory()
        let home = OctunnelDirectory(path: directory.path)
        let text = Self.oldFile.replacingOccurrences(of: #""username" : "w""#, with: #""username" : "a b""#)
        try directory.write("config.json", text, mode: 0o600)

        #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: Self.oldTunnel, home: Self.oldHome))
        #expect(throws: LocalFileError.self) { try SavedSettings.load(from: home, profile: Self.work) }
        #expect(try readText(home.configPath) == text)
    }
}

// A section as the version before `forwardList` decoded it: its synthesized `Codable`, flat keys
// that ignore the others, so a section reads in that version when each of these parts reads.

/// Where and how both roles signed in.
private struct OldSignIn: Decodable, Equatable {
    let host: String
    let port: Int
    let username: String
    let agent: Bool?
    let passwordFile: String?
}

/// OpenCode's forward and the others, in the keys both roles read.
private struct OldPorts: Decodable, Equatable {
    let remotePort: Int
    let homePort: Int
    let remoteHost: String?
    let forwards: [String]?
}

/// The tunnel section's own keys.
private struct OldTunnelOnly: Decodable, Equatable {
    let localPort: Int
    let notify: Bool?
    let notifyCommand: String?
    let notifyTimeout: Int?
    let pairPort: Bool?
}

/// The home section's own key.
private struct OldHomeOnly: Decodable, Equatable {
    let homeHost: String?
}
