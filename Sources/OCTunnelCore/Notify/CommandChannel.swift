import Foundation

/// `--notify-command`: the user's program, run once per moment told (no shell), the facts in its
/// environment (`AgentMoment.environment`, never an `OPENCODE_*` variable), in a process group
/// of its own killed whole at its time limit; a failure is a warning, never fatal.
final class CommandChannel: NotificationChannel {
    /// The program and its time bound.
    struct Options: Sendable, Equatable {
        /// The program, run without a shell (searched in `PATH` when it names no directory).
        var program: String
        /// Seconds it may run before it is killed.
        var timeout = Double(defaultTimeout)
        /// `--notify-timeout`'s default and its bounds, in seconds.
        static let defaultTimeout = 10
        static let timeoutRange = 1...600
    }

    let name = "--notify-command"
    let immediate = false
    let options: Options

    init(_ options: Options) {
        self.options = options
    }

    func deliver(_ moment: AgentMoment, context: ChannelContext) {
        Self.run(
            options.program, environment: context.environment.merging(moment.environment) { $1 },
            timeout: options.timeout,
            groups: context.groups, secrets: context.secrets, emit: context.emit)
    }

    /// Runs `command`, waited for up to `timeout` s (its whole process group killed then, with
    /// `groups`); a failure is a warning.
    static func run(
        _ command: String, environment: [String: String], timeout: Double, groups: ChildGroups? = nil,
        secrets: [String] = [],
        emit: @Sendable (EngineEvent) -> Void
    ) {
        let shown = OutsideText.shown(command, limit: 120)
        do {
            let result = try ChildProcess.run(
                command, [], environment: environment, timeout: timeout, searchPath: !command.contains("/"),
                groups: groups)
            if result.timedOut {
                emit(.warning("--notify-command \(shown) ran longer than \(Int(timeout)) s and was stopped"))
            } else if result.status != 0 {
                let last = result.stderr.split(separator: "\n").last
                let said = last.map { ": " + OutsideText.shown(String($0), secrets: secrets, limit: 200) } ?? ""
                emit(.warning("--notify-command \(shown) exited \(result.status)\(said)"))
            }
        } catch {
            emit(.warning("--notify-command \(shown) could not start: \(error.description)"))
        }
    }
}
