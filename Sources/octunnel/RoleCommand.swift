import ArgumentParser
import OCTunnelCore

/// What a per-role command asks of a running `up` (`status`, `reconnect`): its options, its
/// name and abstract, and the asking, once for both ends.
protocol RoleAction: ParsableArguments {
    /// The subcommand's name under `tunnel` and `home`.
    static var commandName: String { get }
    /// The abstract, for the process that `up` names (`tunnel up`, `home up`).
    static func abstract(up: String) -> String
    /// Asks the running process behind `endpoint` (its role's, of one profile), through its status socket.
    func run(endpoint: StatusEndpoint) throws
}

/// Which end a per-role command speaks to.
protocol RoleSide {
    static var role: Role { get }
}

/// The laptop's end: `tunnel up`.
enum TunnelSide: RoleSide {
    static var role: Role { .tunnel }
}

/// The home machine's end: `home up`.
enum HomeSide: RoleSide {
    static var role: Role { .home }
}

/// `Action` asked of `Side`'s running `up`: one command for `tunnel status` and `home status`,
/// `tunnel reconnect` and `home reconnect`, the same options in the same order.
struct RoleCommand<Side: RoleSide, Action: RoleAction>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: Action.commandName, abstract: Action.abstract(up: "\(Side.role.rawValue) up"))
    }

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var profile: ProfileOptions
    @OptionGroup var options: Action

    func run() throws {
        try runReportingErrors {
            try options.run(
                endpoint: StatusEndpoint(directory: directory.resolved, role: Side.role, profile: try profile.resolved))
        }
    }
}
