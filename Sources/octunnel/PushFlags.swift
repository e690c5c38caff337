import ArgumentParser
import OCTunnelCore

/// The phone push of `tunnel up` and `home up` (`PushChoices`): typed over the profile's saved push.
struct PushFlags: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Push the agent's moments to a phone through this ntfy topic, with buttons that answer (default: the push `push setup` saved).",
            valueName: "URL"))
    var push: String?

    @OptionGroup var files: PushFileOptions

    @Option(
        help:
            "What a push shows: brief (the kind of moment only) or full (session, what is asked); default: brief, or as saved."
    )
    var pushDetail: PushDetail?

    /// The run's push (nil: none), saved as the profile's push with `save`; a push flag with
    /// notifications off (`--no-notify`, typed or saved) is a usage error.
    func resolve(directory: OctunnelDirectory, profile: ProfileName, save: Bool, notify: Bool) throws -> PushRun? {
        let choices = PushChoices(
            url: push, tokenFile: files.pushTokenFile, caFile: files.pushCaFile, detail: pushDetail)
        if !notify && !choices.isEmpty {
            Console.say(
                "octunnel: --push and its options with notifications off (--no-notify, typed or saved): pick one")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        var run: PushRun?
        try runReportingErrors {
            run = try choices.resolve(directory: directory, profile: profile, save: save)
        }
        return run
    }
}
