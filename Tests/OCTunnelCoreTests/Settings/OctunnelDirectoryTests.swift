import Foundation
import OCTunnelTestSupport
import OCTunnelCore
import Testing

@Suite("OctunnelDirectory: where octunnel keeps its files", .ownThreads)
struct OctunnelDirectoryTests {
    @Test func resolutionOrderIsFlagThenOctunnelHomeThenXDGThenHome() {
        let everything = ["OCTUNNEL_HOME": "/env/oct", "XDG_CONFIG_HOME": "/xdg", "HOME": "/users/me"]

        #expect(OctunnelDirectory.resolve(explicit: "/flag", environment: everything).path == "/flag")
        #expect(OctunnelDirectory.resolve(explicit: nil, environment: everything).path == "/env/oct")
        #expect(
            OctunnelDirectory.resolve(explicit: nil, environment: ["XDG_CONFIG_HOME": "/xdg", "HOME": "/users/me"]).path
                == "/xdg/octunnel")
        #expect(
            OctunnelDirectory.resolve(explicit: nil, environment: ["HOME": "/users/me"]).path
                == "/users/me/.config/octunnel")
    }

    @Test func emptyValuesFallThroughToTheNextSource() {
        let environment = ["OCTUNNEL_HOME": "", "XDG_CONFIG_HOME": "", "HOME": "/users/me"]
        #expect(OctunnelDirectory.resolve(explicit: "", environment: environment).path == "/users/me/.config/octunnel")
    }

    @Test func aRelativeHomeIsMadeAbsoluteAgainstTheWorkingDirectory() {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(OctunnelDirectory.resolve(explicit: "rel/dir", environment: [:]).path == cwd + "/rel/dir")
        #expect(OctunnelDirectory.resolve(explicit: nil, environment: ["OCTUNNEL_HOME": "rel"]).path == cwd + "/rel")
    }

    @Test func filesLiveDirectlyInTheHome() {
        let home = OctunnelDirectory(path: "/h")
        #expect(home.privateKeyPath == "/h/id_ed25519")
        #expect(home.publicKeyPath == "/h/id_ed25519.pub")
        #expect(home.knownHostsPath == "/h/known_hosts")
        #expect(home.configPath == "/h/config.json")
    }

    @Test func prepareCreatesAMissingHomeAsPrivate() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/a/b/octunnel")

            let note = try home.prepare()

            #expect(note == nil)
            #expect(try mode(of: home.path) == 0o700)
        }
    }

    @Test func prepareTightensAnOpenHomeWeOwnAndSaysSo() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/octunnel")
            try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: false)
            try setMode(0o755, of: home.path)

            let note = try #require(try home.prepare())

            #expect(try mode(of: home.path) == 0o700)
            #expect(note.contains(home.path))
            #expect(note.contains("755"))
            #expect(note.contains("700"))
            #expect(try home.prepare() == nil)
        }
    }

    @Test func aHomeThatIsAFileIsRefusedWithExit77() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/octunnel"
            try writeText("x", to: path)

            let error = #expect(throws: LocalFileError.self) { try OctunnelDirectory(path: path).prepare() }

            #expect(error?.exitStatus.rawValue == 77)
            #expect(try readText(path) == "x")
        }
    }

    @Test func checkPermissionsDoesNotCreateAMissingHome() throws {
        try withTemporaryDirectory { dir throws in
            let home = OctunnelDirectory(path: dir + "/absent")
            #expect(try home.checkPermissions() == nil)
            #expect(!fileExists(home.path))
        }
    }
}
