import ArgumentParser
import Foundation
import OCTunnelCore

extension Tunnel {
    struct ReverseCommandCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reverse-command",
            abstract: "Print what the home machine runs to keep its reverse tunnel to the VPS (stdout)."
        )

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var targetOptions: TunnelTargetOptions

        @Option(
            help: ArgumentHelp(
                "ssh, autossh, systemd (a user unit) or launchd (a LaunchAgent "
                    + "plist); home, home-systemd, home-launchd: the same with `octunnel home up` instead of ssh."))
        var format: String = "ssh"

        func validate() throws {
            guard ReverseCommand.Format(rawValue: format) != nil else {
                throw ValidationError(
                    "--format must be one of: \(ReverseCommand.Format.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
        }

        func run() throws {
            try runReportingErrors {
                let settings = try targetOptions.resolve(
                    .tunnel, directory: directory.resolved, profile: try profile.resolved)
                var reverse = settings.reverse
                // This binary's path as `service install` writes it (the home machine may keep it
                // elsewhere: the unit says which binary it ran here).
                reverse.octunnelPath = ExecutablePath.resolve()
                let text = reverse.render(ReverseCommand.Format(rawValue: format)!)
                Console.data(text.hasSuffix("\n") ? String(text.dropLast()) : text)
            }
        }
    }
}
