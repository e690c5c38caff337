import ArgumentParser
import Foundation
import OCTunnelCore

struct Service: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the tunnel (or the home end) at login: a systemd user unit or a launchd LaunchAgent.",
        subcommands: [Install.self, Uninstall.self, Status.self]
    )
}

/// The role, profile, home and format every `service` command takes.
struct ServiceOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("What the service runs: `tunnel` (this laptop's tunnel up) or `home` (home up).", valueName: "tunnel|home"))
    var role: String

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var profile: ProfileOptions

    @Option(help: ArgumentHelp("systemd (a user unit) or launchd (a LaunchAgent). Default: this system's.", valueName: "systemd|launchd"))
    var format: String?

    func validate() throws {
        guard Role(rawValue: role) != nil else { throw ValidationError("the role must be `tunnel` or `home`, not \"\(role)\"") }
        if let format, ServiceFormat(rawValue: format) == nil {
            throw ValidationError("--format must be one of: \(ServiceFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func definition() throws -> (ServiceDefinition, OctunnelHome, ProfileName, Role) {
        let home = directory.resolved
        let profile = try self.profile.resolved
        let role = Role(rawValue: role)!
        let definition = ServiceDefinition(role: role, profile: profile, format: format.flatMap(ServiceFormat.init) ?? .native,
                                           executable: ExecutablePath.resolve(), octunnelHome: home.path)
        return (definition, home, profile, role)
    }
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

        func validate() throws {
            if print && now { throw ValidationError("--print writes nothing, so it cannot be combined with --now") }
        }

        func run() throws {
            try runReportingErrors {
                let (definition, home, profile, role) = try options.definition()
                try definition.validate()
                guard try SavedSettings.load(from: home, profile: profile)?.has(role) == true else {
                    throw OCTunnelError.noSettings(path: home.configPath, profile: profile, role: role)
                }
                if print {
                    Console.data(String(definition.render().dropLast()))
                    Console.say("nothing written; `octunnel service install \(role)` would write this to \(definition.path)")
                    return
                }
                let outcome = try ServiceInstaller(definition: definition).install(force: force)
                switch outcome {
                case .created: Console.say("wrote \(definition.path)")
                case .replaced: Console.say("replaced \(definition.path)")
                case .unchanged: Console.say("\(definition.path) is up to date")
                }
                let manager = ServiceManager(definition: definition)
                let commands = manager.enableCommands(replacing: outcome == .replaced)
                if now {
                    guard manager.isAvailable else {
                        throw OCTunnelError.serviceManagerFailed(command: ServiceManager.shown(commands), detail: "\(manager.tool) not found on PATH")
                    }
                    try manager.run(commands)
                    Console.say("started \(definition.name): \(ServiceManager.shown(commands))")
                } else {
                    Console.say("start it now and at every login:\n  \(ServiceManager.shown(commands))")
                }
                if definition.format == .systemd {
                    Console.say("to run it without a login session too (at boot): loginctl enable-linger $USER")
                }
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
                let installer = ServiceInstaller(definition: definition)
                let state = try installer.state()
                guard state != .absent else {
                    Console.say("nothing to remove: \(definition.path) does not exist")
                    return
                }
                guard state == .ours || force else {
                    throw OCTunnelError.serviceFileNotOurs(path: definition.path, edited: state == .edited, removing: true)
                }
                let manager = ServiceManager(definition: definition)
                if manager.isAvailable {
                    do {
                        try manager.run(manager.disableCommands)
                    } catch {
                        Console.say("octunnel: warning: \(error.localizedDescription.replacingOccurrences(of: "the service file is in place: ", with: "")) It may keep running until you stop it.")
                    }
                } else {
                    Console.say("octunnel: \(manager.tool) not found on PATH: if the service is running, stop it yourself (\(ServiceManager.shown(manager.disableCommands)))")
                }
                try installer.uninstall(force: force)
                Console.say("removed \(definition.path)")
                if manager.isAvailable { try? manager.run(manager.afterRemovalCommands) }
            }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say whether the service file is installed, whose it is, and what the service manager says (stdout)."
        )

        @OptionGroup var options: ServiceOptions

        func run() throws {
            try runReportingErrors {
                let (definition, _, profile, role) = try options.definition()
                let state = try ServiceInstaller(definition: definition).state()
                guard state != .absent else {
                    throw OCTunnelError.serviceNotInstalled(path: definition.path, role: role, profile: profile)
                }
                let whose: String
                switch state {
                case .ours: whose = "written by octunnel"
                case .edited: whose = "written by octunnel, changed since"
                default: whose = "not written by octunnel"
                }
                var rows = [("service", definition.name), ("file", "\(definition.path) (\(whose))")]
                rows += ServiceManager(definition: definition).describe()
                let width = rows.map { $0.0.count }.max() ?? 0
                for (label, value) in rows {
                    Console.data(label + ":" + String(repeating: " ", count: width - label.count + 1) + value)
                }
            }
        }
    }
}
