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

    @Option(name: [.customShort("L"), .customLong("tunnel-forward")],
            help: ArgumentHelp("With --restrict: also allow this forward of `tunnel up -L`, as written there (repeatable).", valueName: "[BIND:]PORT:HOST:HOSTPORT"))
    var tunnelForward: [String] = []

    @Option(name: [.customShort("R"), .customLong("home-forward")],
            help: ArgumentHelp("With --restrict --listen: also allow this forward of `home up -R`, as written there (repeatable).", valueName: "[VPS_BIND:]VPS_PORT:HOST:HOME_PORT"))
    var homeForward: [String] = []

    func validate() throws {
        try checkPort(remotePort, "--remote-port")
        if fingerprint && restrict { throw ValidationError("--fingerprint and --restrict cannot be combined") }
        if listen && !restrict { throw ValidationError("--listen goes with --restrict: `octunnel pubkey --restrict --listen`") }
        _ = try parseHostPort(remoteHost.contains(":") ? "[\(remoteHost)]" : remoteHost)
        if !tunnelForward.isEmpty && (!restrict || listen) { throw ValidationError("-L goes with --restrict (the laptop's line); the home's line takes -R") }
        if !homeForward.isEmpty && !listen { throw ValidationError("-R goes with --restrict --listen (the home's line); the laptop's line takes -L") }
        _ = try ports()
    }

    /// The VPS addresses the line allows: OpenCode's (`--remote-host`:`--remote-port`), then
    /// each -L's target or each -R's listen, once each.
    private func ports() throws -> [HostPort] {
        var result = [HostPort(host: remoteHost, port: remotePort)]
        for (texts, direction) in [(tunnelForward, Forward.Direction.local), (homeForward, .remote)] {
            for forward in try parseForwards(texts, direction: direction, defaultBind: Defaults.remoteHost) {
                let port = direction == .local ? forward.target : forward.listen
                if !result.contains(port) { result.append(port) }
            }
        }
        return result
    }

    func run() throws {
        try runReportingErrors {
            let home = options.resolved
            try home.checkPermissions()
            let key = try KeyStore(home: home).publicKey()
            if fingerprint {
                Console.data(key.fingerprint)
            } else if restrict && listen {
                Console.data(listenAuthorizedKeysLine(key, listens: try ports()))
            } else if restrict {
                Console.data(restrictedAuthorizedKeysLine(key, targets: try ports()))
            } else {
                Console.data(key.line)
            }
        }
    }
}
