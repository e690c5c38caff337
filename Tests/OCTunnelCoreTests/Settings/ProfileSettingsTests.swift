import Foundation
import OCTunnelTestSupport
@testable import OCTunnelCore
import Testing

@Suite("Profiles: names, config.json per profile and role, files from before profiles", .ownThreads)
struct ProfileSettingsTests {
    let tunnel = TunnelSettings(
        host: "vps.example.com", port: 22, username: "me", remotePort: 18080, localPort: 4096, homePort: 4100)
    let other = TunnelSettings(
        host: "work.example.com", port: 2222, username: "w", remotePort: 18081, localPort: 4097, homePort: 4096,
        remoteHost: "::1")
    let homeSide = HomeSettings(host: "vps.example.com", port: 22, username: "home", remotePort: 18080, homePort: 4096)

    @Test func profileNamesAreSafeForFileAndUnitNames() throws {
        for good in ["default", "work", "vps-2", "a", "home_lab", "0", String(repeating: "x", count: 32)] {
            #expect(try ProfileName(good).rawValue == good)
        }
        for bad in [
            "", "Work", "a/b", "..", ".hidden", "-x", "_x", "a b", "a.b", "a@b", "é", "x\n",
            String(repeating: "x", count: 33),
        ] {
            #expect(throws: ProfileNameError.self, "\(bad.debugDescription) should be refused") { try ProfileName(bad) }
        }
    }

    @Test func theProfileComesFromTheFlagThenTheEnvironmentThenIsTheDefault() throws {
        #expect(try ProfileName.resolve(explicit: "a", environment: ["OCTUNNEL_PROFILE": "b"]).rawValue == "a")
        #expect(try ProfileName.resolve(explicit: nil, environment: ["OCTUNNEL_PROFILE": "b"]).rawValue == "b")
        #expect(try ProfileName.resolve(explicit: "", environment: ["OCTUNNEL_PROFILE": ""]) == .default)
        #expect(throws: ProfileNameError.self) {
            try ProfileName.resolve(explicit: nil, environment: ["OCTUNNEL_PROFILE": "../x"])
        }
        #expect(ProfileName.isNamed(explicit: nil, environment: ["OCTUNNEL_PROFILE": "b"]))
        #expect(!ProfileName.isNamed(explicit: "", environment: [:]))
    }

    @Test func runtimePathsAndInstanceNamesArePerRoleAndProfile() throws {
        let home = OctunnelDirectory(path: "/h")
        let work = try ProfileName("work")
        #expect(home.runtimePath(role: .tunnel, profile: .default, suffix: ".sock") == "/h/run/tunnel.sock")
        #expect(home.runtimePath(role: .tunnel, profile: work, suffix: ".sock") == "/h/run/tunnel-work.sock")
        #expect(home.runtimePath(role: .home, profile: work, suffix: ".sock") == "/h/run/home-work.sock")
    }

    @Test func twoProfilesAndBothRolesAreSavedApart() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/octunnel")
            let work = try ProfileName("work")

            try tunnel.save(to: home)
            try other.save(to: home, profile: work)
            try homeSide.save(to: home, profile: work)

            #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: tunnel))
            #expect(try SavedSettings.load(from: home, profile: work) == SavedSettings(tunnel: other, home: homeSide))
            #expect(try SavedSettings.load(from: home, profile: ProfileName("absent")) == nil)
            #expect(try SavedSettings.all(in: home).map(\.profile) == [.default, work])
            #expect(try mode(of: home.configPath) == 0o600)

            // Saving one section again replaces only that section.
            var moved = tunnel
            moved.localPort = 5000
            try moved.save(to: home, profile: work)
            #expect(try SavedSettings.load(from: home, profile: work) == SavedSettings(tunnel: moved, home: homeSide))
            #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: tunnel))
        }
    }

    @Test func savesOfDifferentProfilesAtTheSameTimeAreAllKept() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/octunnel")
            try home.prepare()
            let names = try (0..<8).map { try ProfileName("p\($0)") }
            let failures = Failures()
            DispatchQueue.concurrentPerform(iterations: names.count) { index in
                var settings = tunnel
                settings.localPort = 5000 + index
                do { try settings.save(to: home, profile: names[index]) } catch { failures.add("\(error)") }
            }
            #expect(failures.all.isEmpty)
            let saved = try SavedSettings.all(in: home)
            #expect(saved.map(\.profile) == names)
            #expect(saved.map { $0.settings.tunnel?.localPort } == (0..<8).map { 5000 + $0 })
        }
    }

    @Test func aFileFromBeforeProfilesLoadsAsTheDefaultTunnelAndKeepsEveryKeyWhenConverted() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/octunnel")
            try home.prepare()
            // Exactly what the previous version wrote (prettyPrinted, sortedKeys), plus a key it did not know.
            let old = """
                {
                  "homePort" : 4100,
                  "host" : "vps.example.com",
                  "localPort" : 4096,
                  "note" : "kept",
                  "port" : 22,
                  "remoteHost" : "::1",
                  "remotePort" : 18080,
                  "username" : "me"
                }

                """
            try writeText(old, to: home.configPath)
            var expected = tunnel
            expected.remoteHost = "::1"

            #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: expected))
            #expect(try ConfigFile(directory: home).read()?.isLegacy == true)
            #expect(try readText(home.configPath) == old, "reading never rewrites")

            try other.save(to: home, profile: ProfileName("work"))

            #expect(try ConfigFile(directory: home).read()?.isLegacy == false)
            #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: expected))
            #expect(try SavedSettings.load(from: home, profile: ProfileName("work")) == SavedSettings(tunnel: other))
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(readBytes(home.configPath))) as? [String: Any])
            let converted = try #require(
                ((object["profiles"] as? [String: Any])?["default"] as? [String: Any])?["tunnel"] as? [String: Any])
            #expect(converted["note"] as? String == "kept")
            #expect(object["version"] as? Int == 2)
        }
    }

    @Test func keysThisVersionDoesNotKnowSurviveASave() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/octunnel")
            try home.prepare()
            try writeText(
                #"{"future":{"x":1},"profiles":{"default":{"status":{"y":2}}},"version":3}"#, to: home.configPath)

            try tunnel.save(to: home)

            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(readBytes(home.configPath))) as? [String: Any])
            #expect((object["future"] as? [String: Any])?["x"] as? Int == 1)
            let sections = try #require((object["profiles"] as? [String: Any])?["default"] as? [String: Any])
            #expect((sections["status"] as? [String: Any])?["y"] as? Int == 2)
            #expect(try SavedSettings.load(from: home) == SavedSettings(tunnel: tunnel))
        }
    }

    /// A broken file stops reading with 65; a save refuses a file it cannot parse, and keeps the
    /// broken section of another profile as it is.
    @Test(arguments: [
        ("not json", "not JSON", true),
        ("[1,2]", "not a JSON object", true),
        (#"{"profiles":[]}"#, "profiles is not an object", true),
        (#"{"profiles":{"Bad/Name":{}}}"#, "Bad/Name", true),
        (#"{"profiles":{"default":{"tunnel":{"host":"h","port":22}}}}"#, "profiles.default.tunnel.username", false),
        (
            #"{"profiles":{"default":{"home":{"host":"h","port":"22","username":"u","remotePort":1,"homePort":2}}}}"#,
            "profiles.default.home.port", false
        ),
        (#"{"host":"h","port":70000,"username":"u","remotePort":1,"localPort":2,"homePort":3}"#, "70000", false),
    ])
    func aFileThatIsNotValidIsExit65AndNeverReplaced(text: String, named: String, saveRefused: Bool) throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/octunnel")
            try home.prepare()
            try writeText(text, to: home.configPath)

            let error = #expect(throws: LocalFileError.self) { _ = try SavedSettings.all(in: home) }

            #expect(error?.exitStatus == .dataError)
            #expect(
                error?.localizedDescription.contains(named) == true,
                "\(String(describing: error?.localizedDescription))")
            if saveRefused {
                #expect(throws: LocalFileError.self) { try tunnel.save(to: home, profile: ProfileName("work")) }
                #expect(try readText(home.configPath) == text)
            } else {
                try tunnel.save(to: home, profile: ProfileName("work"))
                #expect(
                    try SavedSettings.load(from: home, profile: ProfileName("work")) == SavedSettings(tunnel: tunnel))
                #expect(throws: LocalFileError.self) { try SavedSettings.load(from: home) }
            }
        }
    }

    @Test func noSettingsNamesTheProfileAndTheRoleOnlyWhenTheyAreNotTheDefaults() throws {
        let plain = LocalFileError.noSettings(path: "/c.json").localizedDescription
        #expect(plain == "no saved settings in /c.json: run `octunnel tunnel up TARGET --save` first.")
        let named = LocalFileError.noSettings(path: "/c.json", profile: try ProfileName("work"), role: .home)
            .localizedDescription
        #expect(named.contains("for profile work"))
        #expect(named.contains("octunnel home up TARGET --save --profile work"))
        #expect(LocalFileError.noSettings(path: "/c.json").exitStatus.rawValue == 66)
    }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
