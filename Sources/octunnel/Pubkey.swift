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
    var tunnelForward: [ForwardArgument<ListensHere>] = []

    @Option(name: [.customShort("R"), .customLong("home-forward")],
            help: ArgumentHelp("With --restrict --listen: also allow this forward of `home up -R`, as written there (repeatable).", valueName: "[VPS_BIND:]VPS_PORT:HOST:HOME_PORT"))
    var homeForward: [ForwardArgument<ListensOnVPS>] = []

    @Flag(help: "With --restrict: allow a -L or -R listen off loopback, as `tunnel up --allow-lan` / `home up --allow-lan` do.")
    var allowLan = false

    func validate() throws {
        try checkPort(remotePort, "--remote-port")
        if fingerprint && restrict { throw ValidationError("--fingerprint and --restrict cannot be combined") }
        if listen && !restrict { throw ValidationError("--listen goes with --restrict: `octunnel pubkey --restrict --listen`") }
        _ = try parseHostPort(remoteHost.contains(":") ? "[\(remoteHost)]" : remoteHost)
        if !tunnelForward.isEmpty && (!restrict || listen) { throw ValidationError("-L goes with --restrict (the laptop's line); the home's line takes -R") }
        if !homeForward.isEmpty && !listen { throw ValidationError("-R goes with --restrict --listen (the home's line); the laptop's line takes -L") }
        if restrict { _ = try forwards() }
    }

    /// The forwards the line is for, OpenCode's first (at the defaults of `tunnel up` /
    /// `home up`), checked as those commands check them: what they refuse, this refuses.
    private func forwards() throws -> [Forward] {
        let remote = HostPort(host: remoteHost, port: remotePort)
        let openCode = listen ? Forward(direction: .remote, listen: remote, target: HostPort(host: Defaults.homeHost, port: Defaults.homePort), isOpenCode: true)
            : Forward(direction: .local, listen: HostPort(host: Defaults.bind, port: Defaults.localPort), target: remote, isOpenCode: true)
        let others = listen ? try homeForward.forwards(defaultBind: remoteHost) : try tunnelForward.forwards(defaultBind: Defaults.bind)
        return try checkForwards([openCode] + others, allowLAN: allowLan)
    }

    func run() throws {
        try runReportingErrors {
            let home = options.resolved
            try home.checkPermissions()
            let key = try KeyStore(home: home).publicKey()
            if fingerprint {
                Console.data(key.fingerprint)
            } else if restrict && listen {
                Console.data(listenAuthorizedKeysLine(key, listens: Forward.vpsEnds(try forwards())))
            } else if restrict {
                Console.data(restrictedAuthorizedKeysLine(key, targets: Forward.vpsEnds(try forwards())))
            } else {
                Console.data(key.line)
            }
        }
    }
}
