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
            abstract: "List octunnel's lines on the VPS: role, forwards, fingerprint, "
                + "device (the comment), the day each was added and its lineage (stdout)."
        )

        @OptionGroup var vps: VPSKeysFile

        func validate() throws { try vps.check() }

        func run() throws {
            try runReportingErrors {
                let lines = try vps.keys().list()
                lines.map { VPSKeys.row($0, in: lines) }.forEach(Console.data)
                Console.say(
                    lines.isEmpty
                        ? "No octunnel line in \(vps.file) on \(vps.target)."
                        : "\(lines.count) octunnel line(s) in \(vps.file) on \(vps.target).")
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Remove octunnel's line of one key and its whole lineage (the successors it added, pending or not, and theirs) "
                + "from the VPS's authorized_keys; every other line stays as it was."
        )

        @Argument(
            help: ArgumentHelp(
                "The key's fingerprint, as `keys list` or `pubkey --fingerprint` print it.", valueName: "SHA256:…"))
        var fingerprint: String

        @OptionGroup var vps: VPSKeysFile

        func validate() throws {
            guard Fingerprint.isValid(fingerprint) else {
                throw ValidationError(
                    "the fingerprint must look like SHA256:<43 base64 characters>, as `octunnel keys list` prints it")
            }
            try vps.check()
        }

        func run() throws {
            try runReportingErrors {
                let revoked = try vps.keys().revoke(fingerprint: fingerprint)
                for line in revoked.removed {
                    Console.say("Removed \(VPSKeys.row(line, in: revoked.removed)) from \(vps.file) on \(vps.target).")
                }
                if revoked.removed.isEmpty {
                    Console.say(
                        "No octunnel line of \(fingerprint) or its successors in \(vps.file) on \(vps.target); "
                            + "nothing was changed.")
                }
                if !revoked.left.isEmpty {
                    let places = revoked.left.map { $0.allSatisfy(\.isNumber) ? "line \($0) of \(vps.file)" : $0 }
                        .joined(separator: ", ")
                    Console.say(
                        "Left \(places): they carry the key but are not octunnel's lines "
                            + "(yours: remove them by hand if the key is lost).")
                }
            }
        }
    }
}

/// The authorized_keys `keys list` and `keys revoke` read, and the ssh login that reaches it.
struct VPSKeysFile: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "How you log in to the VPS with ssh: [user@]host[:port] or a Host of ~/.ssh/config.", valueName: "target"))
    var target: String

    @Option(
        help: ArgumentHelp(
            "Where sshd reads authorized_keys on the VPS (relative to your home there).", valueName: "PATH"))
    var file = AuthorizedKeysPath.standard

    /// Refuses a target ssh would misread and a file the line's forced command cannot name.
    func check() throws {
        if let problem = UserSSH.targetProblem(target) { throw ValidationError(problem) }
        if let problem = AuthorizedKeysPath.problem(file) { throw ValidationError("--file: \(problem)") }
    }

    func keys() -> VPSKeys { VPSKeys(ssh: UserSSH(), target: target, file: file) }
}
