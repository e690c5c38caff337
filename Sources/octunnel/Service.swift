import ArgumentParser
import Foundation
import OCTunnelCore

struct Service: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the tunnel (or the home end) at login: a systemd user unit or a launchd LaunchAgent.",
        subcommands: [Install.self, Uninstall.self, Status.self]
    )
}

extension Service {
    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the service file for the saved settings of a role and profile, and say how to start it.",
            discussion: "Never overwrites a file it did not write (or one changed since) without --force."
        )

        @OptionGroup var options: ServiceOptions

        @Flag(help: "Print the file on stdout and write nothing.")
        var print = false

        @Flag(help: "Also enable and start it now (systemctl --user / launchctl).")
        var now = false

        @Flag(help: "Replace a file octunnel did not write, or one changed since it wrote it.")
        var force = false

        @Option(
            help: ArgumentHelp(
                "Also rotate the role's key on the VPS once it is DAYS "
                    + "days old (`keygen --rotate --install`, checked daily "
                    + "by a systemd timer or a LaunchAgent; the VPS line must come from `octunnel authorize`).",
                valueName: "DAYS"))
        var rotateEvery: Int?

        func validate() throws {
            if print && now { throw ValidationError("--print writes nothing, so it cannot be combined with --now") }
            if let rotateEvery, !(1...3650).contains(rotateEvery) {
                throw ValidationError("--rotate-every \(rotateEvery) is out of range (1-3650 days)")
            }
        }

        func run() throws {
            try runReportingErrors {
                let (definition, home, profile, role) = try options.definition()
                let flow = ServiceFlow(definition: definition)
                if print {
                    try flow.checkInstallable(directory: home, profile: profile, role: role)
                    let files = [definition] + (rotateEvery.map(definition.rotation(everyDays:)) ?? [])
                    for (index, file) in files.enumerated() {
                        if index > 0 { Console.data("") }
                        Console.data(String(file.render().dropLast()))
                    }
                    Console.say(
                        "nothing written; `octunnel service install "
                            + "\(role)` would write this to \(files.map(\.path).joined(separator: ", "))")
                    return
                }
                let installed = try flow.install(
                    directory: home, profile: profile, role: role, force: force, startNow: now, rotateEvery: rotateEvery
                )
                flow.lines(installed).forEach(Console.say)
            }
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop the service and remove the file `service install` wrote (only that file)."
        )

        @OptionGroup var options: ServiceOptions

        @Flag(help: "Remove the file even if octunnel did not write it, or it was changed since.")
        var force = false

        func run() throws {
            try runReportingErrors {
                let (definition, _, _, _) = try options.definition()
                switch try ServiceFlow(definition: definition).uninstall(force: force) {
                case .nothing:
                    Console.say("nothing to remove: \(definition.path) does not exist")
                case .removed(let warning):
                    if let warning { Console.say("octunnel: \(warning)") }
                    Console.say("removed \(definition.path)")
                }
            }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Say whether the service file is installed, whose it is, and what the service manager says (stdout)."
        )

        @OptionGroup var options: ServiceOptions

        func run() throws {
            try runReportingErrors {
                let (definition, _, profile, role) = try options.definition()
                let rows = try ServiceFlow(definition: definition).status(profile: profile, role: role)
                let width = rows.map { $0.0.count }.max() ?? 0
                for (label, value) in rows {
                    Console.data(label + ":" + String(repeating: " ", count: width - label.count + 1) + value)
                }
            }
        }
    }
}
