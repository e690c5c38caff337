import ArgumentParser
import OCTunnelCore

/// The role, profile, home and format every `service` command takes.
struct ServiceOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "What the service runs: `tunnel` (this laptop's tunnel up) or `home` (home up).", valueName: "tunnel|home"))
    var role: String

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var profile: ProfileOptions

    @Option(
        help: ArgumentHelp(
            "systemd (a user unit) or launchd (a LaunchAgent). Default: this system's.", valueName: "systemd|launchd"))
    var format: String?

    func validate() throws {
        guard Role(rawValue: role) != nil else {
            throw ValidationError("the role must be `tunnel` or `home`, not \"\(role)\"")
        }
        if let format, ServiceFormat(rawValue: format) == nil {
            throw ValidationError(
                "--format must be one of: \(ServiceFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func definition() throws -> (ServiceDefinition, OctunnelDirectory, ProfileName, Role) {
        let home = directory.resolved
        let profile = try self.profile.resolved
        let role = Role(rawValue: role)!
        let definition = ServiceDefinition(
            role: role, profile: profile, format: format.flatMap(ServiceFormat.init) ?? .native,
            executable: ExecutablePath.resolve(), octunnelHome: home.path)
        return (definition, home, profile, role)
    }
}
