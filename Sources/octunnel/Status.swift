import ArgumentParser
import OCTunnelCore

/// `tunnel status` and `home status`: ask the running process of that role and profile
/// through its status socket. Never starts anything; nothing running is exit 3.
struct StatusOptions: ParsableArguments {
    @Flag(help: "Print one JSON object on stdout (state, target, hostKey, cipher, connectedSince, local, remote, openConnections, totalConnections, bytesIn, bytesOut, reconnects, lastError, health).")
    var json = false

    /// Prints the status of `role`'s process (stdout), or fails with one line (stderr).
    func show(role: Role, directory: DirectoryOptions, profile: ProfileOptions) throws {
        try runReportingErrors {
            let endpoint = StatusEndpoint(home: directory.resolved, role: role, profile: try profile.resolved)
            let snapshot = try StatusClient(endpoint: endpoint).query()
            if json {
                Console.data(snapshot.jsonText)
            } else {
                snapshot.humanLines().forEach(Console.data)
            }
        }
    }
}

extension Tunnel {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show how the running `tunnel up` of this profile is doing (exit 3 if none runs)."
        )

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var options: StatusOptions

        func run() throws { try options.show(role: .tunnel, directory: directory, profile: profile) }
    }
}

/// `home status`: the same for the home machine's `home up`.
struct HomeStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show how the running `home up` of this profile is doing (exit 3 if none runs)."
    )

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var profile: ProfileOptions
    @OptionGroup var options: StatusOptions

    func run() throws { try options.show(role: .home, directory: directory, profile: profile) }
}
