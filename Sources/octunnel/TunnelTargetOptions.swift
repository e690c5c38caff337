import ArgumentParser
import OCTunnelCore

/// Options shared by `tunnel up`, `check`, `reverse-command` and `home up`.
struct TunnelTargetOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "The VPS: [user@]host[:port] (IPv6 as user@[::1]:2222), or a Host of ~/.ssh/config. Default: the saved one.",
            valueName: "target"))
    var target: String?

    @Option(help: "The VPS port the home machine's reverse tunnel listens on.")
    var remotePort: Int?

    @Option(help: "The VPS address the reverse tunnel listens on.")
    var remoteHost: String?

    @Option(
        help: ArgumentHelp(
            "The OpenCode port on the home machine (what `home up` connects "
                + "to, and the printed reverse-tunnel command's target): \(Defaults.homePort) "
                + "for `opencode serve` (default), 49374 for OpenCode 2's "
                + "background service (49375 on its `local` channel; `opencode service status` prints it)."))
    var homePort: Int?

    func validate() throws {
        if let target { _ = try parseTarget(target) }
        if let remotePort { try checkPort(remotePort, "--remote-port") }
        if let homePort { try checkPort(homePort, "--home-port") }
        if let remoteHost { _ = try parseHostPort(remoteHost.contains(":") ? "[\(remoteHost)]" : remoteHost) }
    }

    /// The settings of this run of `role` (flag, saved, ssh config, default; `ResolvedSettings`),
    /// its notes said on stderr; no target at all is a usage error (64).
    func resolve(
        _ role: Role, directory: OctunnelDirectory, profile: ProfileName, connect: ConnectOptions? = nil,
        localPort: Int? = nil, bind: String? = nil, homeHost: String? = nil,
        more: (inout SettingsFlags) -> Void = { _ in }
    ) throws -> ResolvedSettings {
        var flags = SettingsFlags(
            profile: profile, target: target, remoteHost: remoteHost, remotePort: remotePort, homePort: homePort,
            localPort: localPort, bind: bind, homeHost: homeHost)
        connect?.signInFlags(into: &flags)
        more(&flags)
        do {
            let settings = try ResolvedSettings.load(flags: flags, directory: directory, role: role)
            settings.notes.forEach(Console.say)
            return settings
        } catch let error as SettingsError {
            throw ValidationError(error.message)
        }
    }
}
