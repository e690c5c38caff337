import ArgumentParser
import Foundation
import OCTunnelCore

extension Tunnel {
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Walk every layer once (resolve, TCP, SSH, host key, key, forward, health, events) and say which broke."
        )

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var targetOptions: TunnelTargetOptions
        @OptionGroup var connect: ConnectOptions

        @Option(
            name: [.customShort("L"), .customLong("forward")],
            help: ArgumentHelp(
                "Also check this forward of `tunnel up -L`, as written there (repeatable; default: the saved ones).",
                valueName: "[BIND:]PORT:HOST:HOSTPORT"))
        var forward: [ForwardArgument<ListensHere>] = []

        func validate() throws {
            _ = try forward.forwards(defaultBind: Defaults.bind)
        }

        func run() throws {
            try runReportingErrors {
                let directory = try self.directory.prepared()
                let forwards = forward.isEmpty ? nil : try forward.forwards(defaultBind: Defaults.bind)
                let settings = try targetOptions.resolve(
                    .tunnel, directory: directory, profile: try profile.resolved, connect: connect,
                    localPort: 0
                ) { $0.forwards = forwards }
                let connection = try settings.signIn(directory: directory, say: Console.say)
                let json = connect.json
                let credentials = try settings.credentials(passwordFile: connect.passwordFile)
                let check = TunnelCheck(
                    options: settings.checkOptions(connection), healthTimeout: Double(connect.healthTimeout),
                    credentials: credentials)
                let result = check.run { stage in
                    guard !json else { return }
                    Console.say(
                        "\(stage.skipped ? "–" : stage.ok ? "✓" : "✗") \(stage.name) (\(stage.milliseconds) ms): \(stage.detail)"
                    )
                }
                if json {
                    let stages: [[String: Any]] = result.stages.map {
                        ["name": $0.name, "ok": $0.ok, "ms": $0.milliseconds, "detail": $0.detail].merging(
                            $0.skipped ? ["skipped": true] : [:]
                        ) { a, _ in a }
                    }
                    var verdict: [String: Any] = [
                        "ok": result.failure == nil, "stages": stages, "exitCode": Int(result.exitStatus.rawValue),
                    ]
                    if let failure = result.failure {
                        verdict["layer"] = failure.layer; verdict["message"] = failure.localizedDescription
                    }
                    Console.data(jsonLine(verdict))
                } else if result.failure == nil, result.stages.contains(where: \.skipped) {
                    Console.say(
                        "OpenCode 2 is reachable through \(settings.target.host); "
                            + "its API and event stream were not checked (no password given here)")
                } else if result.failure == nil {
                    Console.say("all layers ✓: OpenCode is reachable through \(settings.target.host)")
                }
                // octunnel's own (restricted) key: what a stolen copy could still ask sshd for, unless `authorize --account` closed it.
                if !json, !settings.useAgent, settings.identityFile == nil,
                    !AuthorizedTargets(directory: directory).isClosed(settings.target, role: .tunnel)
                {
                    Console.say("note: \(AccountDropIn.advice(user: settings.target.user))")
                }
                if result.failure != nil { throw ExitCode(result.exitStatus.rawValue) }
            }
        }
    }
}
