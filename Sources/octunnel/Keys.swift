import ArgumentParser
import OCTunnelCore

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "octunnel's lines in the VPS's authorized_keys, through your own ssh login.",
        subcommands: [List.self, Revoke.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List octunnel's lines on the VPS: role, forwards, fingerprint, device (the comment) and the day each was added (stdout)."
        )

        @Argument(help: ArgumentHelp("How you log in to the VPS with ssh: [user@]host[:port] or a Host of ~/.ssh/config.", valueName: "target"))
        var target: String

        @Option(help: ArgumentHelp("Where sshd reads authorized_keys on the VPS (relative to your home there).", valueName: "PATH"))
        var file = AuthorizedKeysPath.standard

        func validate() throws {
            if let problem = UserSSH.targetProblem(target) { throw ValidationError(problem) }
            if let problem = AuthorizedKeysPath.problem(file) { throw ValidationError("--file: \(problem)") }
        }

        func run() throws {
            try runReportingErrors {
                let lines = try VPSKeys(ssh: UserSSH(), target: target, file: file).list()
                lines.map(VPSKeys.row).forEach(Console.data)
                Console.say(lines.isEmpty ? "No octunnel line in \(file) on \(target)." : "\(lines.count) octunnel line(s) in \(file) on \(target).")
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove octunnel's line of one key from the VPS's authorized_keys; every other line stays as it was."
        )

        @Argument(help: ArgumentHelp("The key's fingerprint, as `keys list` or `pubkey --fingerprint` print it.", valueName: "SHA256:…"))
        var fingerprint: String

        @Argument(help: ArgumentHelp("How you log in to the VPS with ssh: [user@]host[:port] or a Host of ~/.ssh/config.", valueName: "target"))
        var target: String

        @Option(help: ArgumentHelp("Where sshd reads authorized_keys on the VPS (relative to your home there).", valueName: "PATH"))
        var file = AuthorizedKeysPath.standard

        func validate() throws {
            guard Fingerprint.isValid(fingerprint) else {
                throw ValidationError("the fingerprint must look like SHA256:<43 base64 characters>, as `octunnel keys list` prints it")
            }
            if let problem = UserSSH.targetProblem(target) { throw ValidationError(problem) }
            if let problem = AuthorizedKeysPath.problem(file) { throw ValidationError("--file: \(problem)") }
        }

        func run() throws {
            try runReportingErrors {
                switch try VPSKeys(ssh: UserSSH(), target: target, file: file).revoke(fingerprint: fingerprint) {
                case .revoked(let line):
                    Console.say("Removed the line of \(fingerprint) (\(VPSKeys.row(line))) from \(file) on \(target).")
                case .absent:
                    Console.say("No octunnel line of \(fingerprint) in \(file) on \(target); nothing was changed.")
                }
            }
        }
    }
}
