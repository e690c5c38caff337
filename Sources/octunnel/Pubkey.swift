import ArgumentParser
import OCTunnelCore

struct Pubkey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the public key line for the VPS's authorized_keys (stdout only)."
    )

    @OptionGroup var options: DirectoryOptions

    @Flag(help: "Print only the SHA256 fingerprint.")
    var fingerprint = false

    @Flag(help: "Print a least-privilege line: the key may open the tunnel's one forward and run no command.")
    var restrict = false

    @OptionGroup var line: KeyLineOptions<Pubkey>

    func validate() throws {
        try line.checkRemote()
        if fingerprint && restrict { throw ValidationError("--fingerprint and --restrict cannot be combined") }
        if line.listen && !restrict {
            throw ValidationError("--listen goes with --restrict: `octunnel pubkey --restrict --listen`")
        }
        if !line.tunnelForward.isEmpty && (!restrict || line.listen) {
            throw ValidationError("-L goes with --restrict (the laptop's line); the home's line takes -R")
        }
        if !line.homeForward.isEmpty && !line.listen {
            throw ValidationError("-R goes with --restrict --listen (the home's line); the laptop's line takes -L")
        }
        if restrict { _ = try line.forwards() }
    }

    func run() throws {
        try runReportingErrors {
            let home = options.resolved
            try home.checkPermissions()
            let key = try KeyStore(directory: home).publicKey()
            if fingerprint {
                Console.data(key.fingerprint)
            } else if restrict && line.listen {
                Console.data(listenAuthorizedKeysLine(key, listens: Forward.vpsEnds(try line.forwards())))
            } else if restrict {
                Console.data(restrictedAuthorizedKeysLine(key, targets: Forward.vpsEnds(try line.forwards())))
            } else {
                Console.data(key.line)
            }
        }
    }
}

extension Pubkey: KeyLineWording {
    static let goesWith = ["--restrict"]
    static let listenHelp =
        "With --restrict: the home machine's line instead (`home up`): the key may only ask the VPS to listen on that port."
}
