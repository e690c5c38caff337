import ArgumentParser
import OCTunnelCore

/// `--profile`, on every command that reads or writes saved settings.
struct ProfileOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("The saved settings to use (default: $OCTUNNEL_PROFILE, else `default`).", valueName: "NAME")
    )
    var profile: String?

    func validate() throws { _ = try resolved }

    /// The profile named by `--profile` or `$OCTUNNEL_PROFILE`, else the default one.
    var resolved: ProfileName {
        get throws {
            do {
                return try ProfileName.resolve(explicit: profile)
            } catch {
                let source = (profile ?? "").isEmpty ? "OCTUNNEL_PROFILE: " : "--profile: "
                throw ValidationError(source + error.description)
            }
        }
    }

    /// Whether a profile was named (flag or environment).
    var isNamed: Bool { ProfileName.isNamed(explicit: profile) }
}
