import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `config show` is made by the encoder that saves (issue 49): every field `--save` kept shows,
/// as config.json holds it, in both roles' sections.
@Suite("config show: every saved field, as config.json holds it", .ownThreads)
struct ConfigShowTests {
    @Test(
        "a profile with every field of both sections: shown equals the file's sections (remoteHost's default added where the file has none)"
    )
    func everySavedFieldShows() throws {
        let directory = try TempDirectory()
        let file = """
            {"version": 2, "profiles": {"default": {
              "tunnel": {"host": "vps.example.com", "port": 2222, "username": "me", "remotePort": 18081, "localPort": 4097, "homePort": 4100,
                         "agent": true, "passwordFile": "/home/me/.pw", "forwards": ["127.0.0.1:3000:127.0.0.1:18082"],
                         "notify": false, "notifyCommand": "notify-me --now", "notifyTimeout": 20, "pairPort": 49380},
              "home": {"host": "vps.example.com", "port": 2222, "username": "h", "remotePort": 18081, "homePort": 4100,
                       "remoteHost": "127.0.0.2", "homeHost": "::1", "agent": false, "passwordFile": "/home/h/.pw",
                       "forwards": ["127.0.0.1:18082:127.0.0.1:3000"]}}}}
            """
        try directory.write("config.json", file)
        let home = OctunnelDirectory(path: directory.path)
        let saved = try #require(try SavedSettings.load(from: home))
        let sections = try #require(
            ((try JSONSerialization.jsonObject(with: Data(file.utf8)) as? [String: Any])?["profiles"] as? [String: Any])?[
                "default"] as? [String: Any])
        // Every field of the file, and the one list of forwards this version writes beside them.
        var expected = sections
        var tunnel = try #require(expected["tunnel"] as? [String: Any])
        tunnel["remoteHost"] = "127.0.0.1"
        tunnel["forwardList"] = [
            ["opencode": true, "forward": "127.0.0.1:4097:127.0.0.1:18081"],
            ["forward": "127.0.0.1:3000:127.0.0.1:18082"],
        ]
        expected["tunnel"] = tunnel
        var homeSection = try #require(expected["home"] as? [String: Any])
        homeSection["forwardList"] = [
            ["opencode": true, "forward": "127.0.0.2:18081:[::1]:4100"], ["forward": "127.0.0.1:18082:127.0.0.1:3000"],
        ]
        expected["home"] = homeSection
        #expect(NSDictionary(dictionary: saved.shown) == NSDictionary(dictionary: expected), "\(saved.shown)")
        // Read once, the file holds that shape: what config show shows is config.json's section.
        let written = try #require(
            ((try JSONSerialization.jsonObject(with: Data(readText(directory.file("config.json")).utf8))
                as? [String: Any])?["profiles"] as? [String: Any])?["default"] as? [String: Any])
        var writtenTunnel = try #require(written["tunnel"] as? [String: Any])
        writtenTunnel["remoteHost"] = writtenTunnel["remoteHost"] ?? "127.0.0.1"
        #expect(
            NSDictionary(dictionary: expected)
                == NSDictionary(dictionary: written.merging(["tunnel": writtenTunnel]) { $1 }), "\(written)")

        let other = try TempDirectory()
        try other.write(
            "config.json",
            #"{"version":2,"profiles":{"default":{"tunnel":{"host":"v","port":22,"username":"u","remotePort":18080,"localPort":4096,"homePort":4096,"pairPort":false}}}}"#
        )
        let off = try #require(try SavedSettings.load(from: OctunnelDirectory(path: other.path)))
        #expect((off.shown["tunnel"] as? [String: Any])?["pairPort"] as? Bool == false, "\(off.shown)")
    }
}
