import ArgumentParser
import OCTunnelCore

/// `--keepalive`, the same for both ends' `up` (`tunnel up`, `home up`).
struct KeepaliveOption: ParsableArguments {
    @Option(help: "Seconds between keepalive probes; about three unanswered intervals mean the session is dead.")
    var keepalive: Int = Defaults.keepaliveSeconds

    func validate() throws {
        if let problem = OptionRange.keepalive.problem(keepalive) { throw ValidationError(problem) }
    }
}
