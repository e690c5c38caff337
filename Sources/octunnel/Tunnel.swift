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

        @Option(
            help: ArgumentHelp(
                "The local address to listen on, and only it (default: \(Defaults.bind) "
                    + "and, where the machine has IPv6, ::1, on the same port, as `ssh -L`)."))
        var bind: String?

        @Flag(help: "Allow a non-loopback --bind or -L address (anyone on that network could use the tunnel).")
        var allowLan = false

        @Option(
            name: [.customShort("L"), .customLong("forward")],
            help: ArgumentHelp(
                "Another forward over the same session, as `ssh -L` writes "
                    + "it: this machine's PORT (on BIND) to HOST:HOSTPORT as "
                    + "the VPS sees it, e.g. the app the agent builds (repeatable; OpenCode's stays the first).",
                valueName: "[BIND:]PORT:HOST:HOSTPORT"))
        var forward: [ForwardArgument<ListensHere>] = []

        @OptionGroup var keepaliveOption: KeepaliveOption

        @Option(
            help: ArgumentHelp(
                "Channels to keep open ahead of need, each an idle connection "
                    + "the VPS opens to the home server (default: follow demand, 1-32; 0 turns it off).", valueName: "N"
            ))
        var warm: Int?

        @Flag(help: "Log each client connection.")
        var verbose = false

        @Flag(help: "Skip the health test after connecting.")
        var noHealth = false

        @OptionGroup var pairPortFlags: PairPortFlags
        @OptionGroup var notifyFlags: NotifyFlags
        @OptionGroup var pushFlags: PushFlags

        @Flag(
            help: "Save the target, ports, forwards and the notify and pair-port choices as the default for later runs."
        )
        var save = false

        func validate() throws {
            if let localPort { try checkPort(localPort, "--local-port", allowZero: true) }
            if let warm, let problem = OptionRange.warm.problem(warm) { throw ValidationError(problem) }
            if let bind, !Sockets.isLoopback(bind) && !allowLan {
                throw ValidationError(
                    "--bind \(bind) is not a loopback address: anyone "
                        + "on that network could use the tunnel. Add --allow-lan if that is what you want.")
            }
            _ = try additionalForwards()
        }

        /// The -L forwards, listening on --bind where they name no address.
        private func additionalForwards() throws -> [Forward] {
            try forward.forwards(defaultBind: bind ?? Defaults.bind)
        }

        func run() throws {
            try runReportingErrors {
                let directory = try self.directory.prepared()
                let forwards = forward.isEmpty ? nil : try additionalForwards()
                var settings = try targetOptions.resolve(
                    .tunnel, directory: directory, profile: try profile.resolved, connect: connect,
                    localPort: localPort, bind: bind
                ) { flags in
                    flags.forwards = forwards
                    notifyFlags.apply(to: &flags)
                    flags.pairPort = try? pairPortFlags.choice()
                }
                settings.notify.push = try pushFlags.resolve(
                    directory: directory, profile: try profile.resolved, save: save,
                    notify: settings.notify.enabled)
                settings.notify.push?.yields = true // home up, beside OpenCode, pushes a request first
                var choices = connect.choices(
                    keepalive: keepaliveOption.keepalive, allowLAN: allowLan, health: !noHealth, save: save)
                choices.warm = warm
                choices.homeHint = !connect.json
                let events = EventPrinter(json: connect.json, verbose: verbose)
                try UpFlow(
                    settings: settings, directory: directory, choices: choices, say: Console.say, show: events.show
                ).run()
            }
        }
    }
}
