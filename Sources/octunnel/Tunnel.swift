import ArgumentParser
import OCTunnelCore

struct Tunnel: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run, check and describe the tunnel to the VPS.",
        subcommands: [Up.self, Status.self, Reconnect.self, Check.self, ReverseCommandCommand.self]
    )
}

extension Tunnel {
    struct Up: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forward a local port to the VPS over SSH, in the foreground, until Ctrl-C."
        )

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var targetOptions: TunnelTargetOptions
        @OptionGroup var connect: ConnectOptions

        @Option(help: "The local port clients connect to (0 picks a free one).")
        var localPort: Int?

        @Option(help: "The local address to listen on, and only it (default: \(Defaults.bind) and, where the machine has IPv6, ::1, on the same port, as `ssh -L`).")
        var bind: String?

        @Flag(help: "Allow a non-loopback --bind or -L address (anyone on that network could use the tunnel).")
        var allowLan = false

        @Option(name: [.customShort("L"), .customLong("forward")],
                help: ArgumentHelp("Another forward over the same session, as `ssh -L` writes it: this machine's PORT (on BIND) to HOST:HOSTPORT as the VPS sees it, e.g. the app the agent builds (repeatable; OpenCode's stays the first).",
                                   valueName: "[BIND:]PORT:HOST:HOSTPORT"))
        var forward: [String] = []

        @Option(help: "Seconds between keepalive probes; about three unanswered intervals mean the session is dead.")
        var keepalive: Int = Defaults.keepaliveSeconds

        @Option(help: ArgumentHelp("Channels to keep open ahead of need, each an idle connection the VPS opens to the home server (default: follow demand, 1-32; 0 turns it off).", valueName: "N"))
        var warm: Int?

        @Flag(help: "Log each client connection.")
        var verbose = false

        @Flag(help: "Skip the health test after connecting.")
        var noHealth = false

        @Option(help: ArgumentHelp("Also listen on this port for OpenCode 2's `opencode pair` links: auto (default, or as saved) takes the home server's own port when it is one of OpenCode's (49374, 49375, 4096); N (1024-65535) takes N whatever the far side says.",
                                   valueName: "auto|N"))
        var pairPort: String?

        @Flag(help: "Never listen on the port pair links name.")
        var noPairPort = false

        @Option(help: ArgumentHelp("A program run (no shell) each time the agent finishes, asks for permission or fails, the facts in its environment (OCTUNNEL_EVENT, OCTUNNEL_SESSION_TITLE, OCTUNNEL_MESSAGE, …): a two-line script can push them to a phone.",
                                   valueName: "PROGRAM"))
        var notifyCommand: String?

        @Option(help: ArgumentHelp("Seconds --notify-command may run before it is stopped (default: \(NotifyOptions.defaultTimeout), or as saved).", valueName: "S"))
        var notifyTimeout: Int?

        @Flag(inversion: .prefixedNo,
              help: "Follow OpenCode's event stream and notify when the agent finishes, asks or fails; default: on, or as saved.")
        var notify: Bool?

        @Flag(help: "Save the target, ports, forwards and the notify and pair-port choices as the default for later runs.")
        var save = false

        func validate() throws {
            if let localPort { try checkPort(localPort, "--local-port", allowZero: true) }
            guard (1...3600).contains(keepalive) else { throw ValidationError("--keepalive must be 1-3600 seconds") }
            if let warm, !(0...64).contains(warm) { throw ValidationError("--warm must be 0-64 channels") }
            if notify == false && notifyCommand != nil { throw ValidationError("--notify-command and --no-notify: pick one") }
            if noPairPort && pairPort != nil { throw ValidationError("--pair-port and --no-pair-port: pick one") }
            _ = try pairPortChoice()
            if notifyCommand?.isEmpty == true { throw ValidationError("--notify-command needs a program") }
            let timeouts = NotifyOptions.timeoutRange
            if let notifyTimeout, !timeouts.contains(notifyTimeout) {
                throw ValidationError("--notify-timeout must be \(timeouts.lowerBound)-\(timeouts.upperBound) seconds")
            }
            if let bind, !Sockets.isLoopback(bind) && !allowLan {
                throw ValidationError("--bind \(bind) is not a loopback address: anyone on that network could use the tunnel. Add --allow-lan if that is what you want.")
            }
            _ = try additionalForwards()
        }

        /// `--pair-port auto|N` or `--no-pair-port`, parsed (nil: neither given).
        private func pairPortChoice() throws -> PairPortChoice? {
            if noPairPort { return .off }
            guard let pairPort else { return nil }
            do {
                return try PairPortChoice.parse(pairPort)
            } catch {
                throw ValidationError(error.message)
            }
        }

        /// The -L forwards, parsed (a malformed one exits 64 with the parser's sentence).
        private func additionalForwards() throws -> [Forward] {
            try parseForwards(forward, direction: .local, defaultBind: bind ?? Defaults.bind)
        }

        func run() throws {
            try runReportingErrors {
                let directory = try self.directory.prepared()
                let profile = try self.profile.resolved
                let pairChoice = try pairPortChoice()
                let settings = try targetOptions.resolve(.tunnel, directory: directory, profile: profile, connect: connect,
                                                         localPort: localPort, bind: bind,
                                                         forwards: forward.isEmpty ? nil : try additionalForwards()) { flags in
                    (flags.notify, flags.notifyCommand, flags.notifyTimeout, flags.pairPort) = (notify, notifyCommand, notifyTimeout, pairChoice)
                }
                let connection = try connect.signIn(settings, directory: directory)
                let events = EventPrinter(json: connect.json, verbose: verbose)
                var options = settings.tunnelOptions(connection, keepalive: Double(keepalive), warm: warm)
                options.pairPort = settings.pairPort
                try options.checkForwards(allowLAN: allowLan)
                if let warning = UpRunner.exposureWarning(bind: options.bind) { events.show(.engine(warning)) }
                let health = try healthTest(options, settings: settings)
                let tunnel = try UpRunner(tunnel: options, health: health, onEvent: { events.show($0) })
                tunnel.serveStatus(at: StatusEndpoint(home: directory, role: .tunnel, profile: profile))
                if save {
                    try saveSettings(settings, signedInWith: connection, passwordFile: connect.passwordFilePath(saved: settings.savedPasswordFile),
                                     directory: directory)
                }
                if !connect.json { Console.say(homeMachineHint(settings.reverse)) }
                try tunnel.run()
            }
        }

        /// The health test after each connect (its password read now), nil with --no-health.
        private func healthTest(_ options: TunnelOptions, settings: ResolvedSettings) throws -> TunnelHealth? {
            guard !noHealth else { return nil }
            var health = TunnelHealth(options: options, timeout: Double(connect.healthTimeout),
                                      credentials: try connect.credentials(saved: settings.savedPasswordFile))
            health.notify = settings.notify
            return health
        }

        /// What to keep running on the home machine, said once in text mode.
        private func homeMachineHint(_ reverse: ReverseCommand) -> String {
            "home machine: keep this running there (the reverse tunnel):\n  \(reverse.render(.ssh))\n  or, with octunnel there: \(reverse.render(.home))"
        }
    }
}
