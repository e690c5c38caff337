import ArgumentParser
import OCTunnelCore

/// `--home`, shared by every command: octunnel's directory (not the home machine, which is
/// `home up`'s; docs/architecture.md says which "home" is which).
struct DirectoryOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("octunnel's directory (keys, known_hosts, config.json).", valueName: "DIR"))
    var home: String?

    var resolved: OctunnelDirectory { OctunnelDirectory.resolve(explicit: home) }

    /// The directory, created (0700) or checked first.
    func prepared() throws -> OctunnelDirectory {
        let directory = resolved
        try directory.prepare()
        return directory
    }

    func validate() throws {
        try refuseControlCharacters(home, option: "--home")
    }
}
