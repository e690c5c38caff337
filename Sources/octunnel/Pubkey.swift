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

    @Flag(help: "With --restrict: the home machine's line instead (`home up`): the key may only ask the VPS to listen on that port.")
    var listen = false

    @Option(help: "With --restrict: the VPS port the home reverse tunnel listens on.")
    var remotePort = Defaults.remotePort

    @Option(help: "With --restrict: the VPS address the home reverse tunnel listens on.")
    var remoteHost = Defaults.remoteHost

    func validate() throws {
        try checkPort(remotePort, "--remote-port")
        if fingerprint && restrict { throw ValidationError("--fingerprint and --restrict cannot be combined") }
        if listen && !restrict { throw ValidationError("--listen goes with --restrict: `octunnel pubkey --restrict --listen`") }
        _ = try parseHostPort(remoteHost.contains(":") ? "[\(remoteHost)]" : remoteHost)
    }

    func run() throws {
        try runReportingErrors {
            let home = options.resolved
            try home.checkPermissions()
            let key = try KeyStore(home: home).publicKey()
            if fingerprint {
                Console.data(key.fingerprint)
            } else if restrict && listen {
                Console.data(listenAuthorizedKeysLine(key, remoteHost: remoteHost, remotePort: remotePort))
            } else if restrict {
                Console.data(restrictedAuthorizedKeysLine(key, remoteHost: remoteHost, remotePort: remotePort))
            } else {
                Console.data(key.line)
            }
        }
    }
}
