import ArgumentParser
import Foundation
import OCTunnelCore

/// `push setup URL` and `push test`: a phone that gets OpenCode's moments through ntfy and answers
/// them with its buttons (docs/cli.md "octunnel push").
struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Set up pushes to a phone through an ntfy server, and test them.",
        subcommands: [Setup.self, Test.self]
    )
}

extension PushDetail: ExpressibleByArgument {}

extension PushCommand {
    struct Setup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Make the push and reply topics on an ntfy server, check it answers, save them, and show the address to subscribe to."
        )

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions
        @Argument(
            help:
                "The ntfy server, with a topic or without one (a random topic is made): https://ntfy.example.org[/TOPIC]."
        )
        var url: String
        @OptionGroup var files: PushFileOptions
        @Option(help: "What a push shows: brief (the kind of moment only) or full (session, what is asked).")
        var pushDetail: PushDetail = .brief

        func run() throws {
            try runReportingErrors {
                let outcome = try PushSetup.run(
                    url: url, tokenFile: files.pushTokenFile.map(UserPath.absolute),
                    caFile: files.pushCaFile.map(UserPath.absolute),
                    detail: pushDetail, directory: directory.prepared(), profile: profile.resolved)
                outcome.advice.prefix(2).forEach(Console.say)
                Console.data(outcome.subscribeAddress)
                QRCode(outcome.subscribeAddress)?.terminalLines.forEach(Console.say)
                outcome.advice.dropFirst(2).forEach(Console.say)
            }
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send one push with a button and wait for its tap (exit 83 if none came within --wait).")

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions
        @Option(help: "Seconds to wait for the button's tap.") var wait: Double = 120

        func validate() throws {
            guard wait > 0, wait <= 3600 else {
                throw ValidationError("--wait \(wait) is out of range (0-3600 seconds)")
            }
        }

        func run() throws {
            try runReportingErrors {
                let home = directory.resolved
                let name = try profile.resolved
                guard let settings = try PushSettings.load(directory: home, profile: name) else {
                    throw PushError.notSetUp(profile: name)
                }
                let token = try settings.tokenFile.map { path throws(PushError) in try PushToken.read(path) }
                Console.say(
                    "push: sending a test push through \(settings.url.server); tap its button (waiting up to \(Int(wait)) s)"
                )
                let seconds = try PushTest.run(settings: settings, token: token, wait: wait, report: Console.say)
                Console.say(
                    "push: the tap came back \(String(format: "%.1f", seconds)) s after the push was sent: pushes and their buttons work"
                )
            }
        }
    }
}
