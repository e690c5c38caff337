import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `--save` remembers `--agent` in an optional field; files from before it still load.
@Suite("Saved settings: the agent choice", .ownThreads)
struct SavedAgentSettingTests {
    @Test func anOlderFileWithoutTheFieldLoadsAsKeyFile() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir)
            try writeText(
                """
                {"host": "vps.example.com", "port": 22, "username": "me", "remotePort": 18080, "localPort": 4096, "homePort": 4096}
                """, to: home.configPath)
            let loaded = try #require(try SavedSettings.load(from: home)?.tunnel)
            #expect(loaded.agent == nil)
        }
    }

    @Test func theAgentChoiceRoundTripsAndIsOmittedWhenUnset() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir)
            var settings = TunnelSettings(
                host: "vps", port: 22, username: "me", remotePort: 18080, localPort: 4096, homePort: 4096)
            try settings.save(to: home)
            #expect(!(try readText(home.configPath)).contains("agent"))
            settings.agent = true
            try settings.save(to: home)
            #expect(try SavedSettings.load(from: home)?.tunnel?.agent == true)
        }
    }
}
