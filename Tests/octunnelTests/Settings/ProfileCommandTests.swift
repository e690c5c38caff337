import Foundation
import OCTunnelTestSupport
import Testing

/// `--profile` on the commands that read and write saved settings, and `config show`.
@Suite("octunnel --profile and config show", .ownThreads)
struct ProfileCommandTests {
    /// `tunnel up TARGET --save` against a port nothing listens on: the settings are saved before
    /// the VPS is contacted, then the connection is refused (69).
    func save(
        _ target: String, _ extra: [String], home: String, in dir: String, environment: [String: String]? = nil
    ) throws {
        let result = try Octunnel.run(
            [
                "tunnel", "up", target, "--home", home, "--save", "--no-health", "--local-port", "0",
                "--connect-timeout", "5",
            ] + extra, in: dir, environment: environment)
        try #require(result.status == 69, "\(result)")
        try #require(result.stderr.contains("saved "), "\(result)")
    }

    @Test func twoProfilesAreSavedAndShownApart() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/oct"
            try #require(try Octunnel.run(["keygen", "--home", home], in: dir).status == 0)
            let port = freePort()
            try save("me@127.0.0.1:\(port)", ["--remote-port", "18081"], home: home, in: dir)
            try save("w@127.0.0.1:\(port)", ["--remote-port", "18082", "--profile", "work"], home: home, in: dir)
            try save(
                "x@127.0.0.1:\(port)", ["--remote-port", "18083"], home: home, in: dir,
                environment: Octunnel.environment(home: dir, ["OCTUNNEL_PROFILE": "lab"]))

            let listed = try Octunnel.run(["config", "show", "--home", home], in: dir)
            #expect(listed.status == 0, "\(listed)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
            let profiles = try #require(object["profiles"] as? [String: [String: [String: Any]]])
            #expect(Set(profiles.keys) == ["default", "work", "lab"])
            #expect(profiles["default"]?["tunnel"]?["username"] as? String == "me")
            #expect(profiles["work"]?["tunnel"]?["remotePort"] as? Int == 18082)
            #expect(profiles["lab"]?["tunnel"]?["remotePort"] as? Int == 18083)

            let work = try Octunnel.run(["config", "show", "--home", home, "--profile", "work"], in: dir)
            #expect(work.status == 0)
            #expect(work.stdout.hasPrefix(#"{"profile":"work","tunnel":{"#))
            #expect(work.stdout.contains(#""remotePort":18082"#))
            #expect(!work.stdout.contains("18081"))
            let viaEnvironment = try Octunnel.run(
                ["config", "show", "--home", home], in: dir,
                environment: Octunnel.environment(home: dir, ["OCTUNNEL_PROFILE": "work"]))
            #expect(viaEnvironment.stdout == work.stdout)

            let reverse = try Octunnel.run(["tunnel", "reverse-command", "--home", home, "--profile", "work"], in: dir)
            #expect(reverse.stdout.contains("-R 127.0.0.1:18082:127.0.0.1:4096 -p \(port) w@127.0.0.1"), "\(reverse)")
            let reverseDefault = try Octunnel.run(["tunnel", "reverse-command", "--home", home], in: dir)
            #expect(reverseDefault.stdout.contains("-R 127.0.0.1:18081:"), "\(reverseDefault)")

            let unknown = try Octunnel.run(["config", "show", "--home", home, "--profile", "nope"], in: dir)
            #expect(unknown.status == 66)
            #expect(unknown.stderr.contains("profile nope"))
            let noTarget = try Octunnel.run(
                ["tunnel", "reverse-command", "--home", home, "--profile", "nope"], in: dir)
            #expect(noTarget.status == 64)
            #expect(noTarget.stderr.contains("--save --profile nope"))
            for bad in ["Work", "../x", "a b", "-x"] {
                #expect(try Octunnel.run(["config", "show", "--home", home, "--profile", bad], in: dir).status == 64)
            }
            let badEnvironment = try Octunnel.run(
                ["config", "show", "--home", home], in: dir,
                environment: Octunnel.environment(home: dir, ["OCTUNNEL_PROFILE": "a/b"]))
            #expect(badEnvironment.status == 64)
            #expect(badEnvironment.stderr.contains("OCTUNNEL_PROFILE"))
        }
    }

    @Test func aConfigFileFromBeforeProfilesStillLoadsAndIsConvertedWithoutLoss() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/oct"
            try #require(try Octunnel.run(["keygen", "--home", home], in: dir).status == 0)
            let old = """
                {
                  "homePort" : 4100,
                  "host" : "vps.example.com",
                  "localPort" : 4096,
                  "port" : 2222,
                  "remotePort" : 18080,
                  "username" : "me"
                }

                """
            try writeText(old, to: home + "/config.json")

            let shown = try Octunnel.run(["config", "show", "--home", home, "--profile", "default"], in: dir)
            #expect(shown.status == 0, "\(shown)")
            #expect(
                shown.stdout
                    == #"{"profile":"default","tunnel":{"forwardList":[{"forward":"127.0.0.1:4096:127.0.0.1:18080","opencode":true}],"homePort":4100,"host":"vps.example.com","localPort":4096,"port":2222,"remoteHost":"127.0.0.1","remotePort":18080,"username":"me"}}"#
                    + "\n")
            let reverse = try Octunnel.run(["tunnel", "reverse-command", "--home", home], in: dir)
            #expect(
                reverse.stdout.contains("-R 127.0.0.1:18080:127.0.0.1:4100 -p 2222 me@vps.example.com"), "\(reverse)")
            #expect(try readText(home + "/config.json") == old)

            try save("w@127.0.0.1:\(freePort())", ["--profile", "work"], home: home, in: dir)

            let after = try Octunnel.run(["config", "show", "--home", home, "--profile", "default"], in: dir)
            #expect(after.stdout == shown.stdout)
            #expect(try readText(home + "/config.json").contains(#""version" : 2"#))
        }
    }
}
