import ArgumentParser
import OCTunnelCore

struct HomeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "home",
        abstract:
            "Run the home machine's side: the VPS listens, and each connection it forwards is carried to OpenCode here.",
        subcommands: [Up.self, HomeStatus.self, HomeReconnect.self]
    )
}

extension HomeCommand {
    struct Up: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Keep the reverse tunnel from the VPS to OpenCode on this machine, in the foreground, until Ctrl-C."
        )

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var targetOptions: TunnelTargetOptions
        @OptionGroup var connect: ConnectOptions
        @OptionGroup var notifyFlags: NotifyFlags
        @OptionGroup var pushFlags: PushFlags

        @Option(help: "The address OpenCode listens on, on this machine.")
        var homeHost: String?

        @OptionGroup var keepaliveOption: KeepaliveOption

        @Flag(help: "Log each forwarded connection.")
        var verbose = false

        @Flag(help: "Skip the health test of the home port before listening.")
        var noHealth = false

        @Flag(
            help:
                "Save the target, ports, forwards and notify choices as this machine's home settings (and `service install home`'s)."
        )
        var save = false

        @Flag(
            help: ArgumentHelp(
                "Close a forwarded connection OpenCode cannot take instead "
                    + "of answering it with an HTTP 502 naming the fix (for services that are not HTTP)."))
        var noHttpErrors = false

        @Option(
            name: [.customShort("R"), .customLong("forward")],
            help: ArgumentHelp(
                "Another forward over the same session, as `ssh -R` writes "
                    + "it: the VPS listens on VPS_BIND:VPS_PORT and each connection "
                    + "goes to HOST:HOME_PORT here, e.g. the app the agent builds (repeatable; OpenCode's stays the first).",
                valueName: "[VPS_BIND:]VPS_PORT:HOST:HOME_PORT"))
        var forward: [ForwardArgument<ListensOnVPS>] = []

        @Flag(help: "Allow a -R listen on a VPS address other than loopback (anyone who reaches the VPS could use it).")
        var allowLan = false

        func validate() throws {
            if let homeHost { _ = try parseHostPort(homeHost.contains(":") ? "[\(homeHost)]" : homeHost) }
            _ = try additionalForwards()
        }

        /// The -R forwards, listening on the VPS's --remote-host where they name no address.
        private func additionalForwards() throws -> [Forward] {
            try forward.forwards(defaultBind: targetOptions.remoteHost ?? Defaults.remoteHost)
        }

        func run() throws {
            try runReportingErrors {
                let directory = try self.directory.prepared()
                let forwards = forward.isEmpty ? nil : try additionalForwards()
                var settings = try targetOptions.resolve(
                    .home, directory: directory, profile: try profile.resolved, connect: connect,
                    homeHost: homeHost
                ) { flags in
                    flags.forwards = forwards
                    notifyFlags.apply(to: &flags)
                }
                settings.notify.push = try pushFlags.resolve(
                    directory: directory, profile: try profile.resolved, save: save,
                    notify: settings.notify.enabled)
                var choices = connect.choices(
                    keepalive: keepaliveOption.keepalive, allowLAN: allowLan, health: !noHealth, save: save)
                choices.httpErrors = !noHttpErrors
                let events = EventPrinter(json: connect.json, verbose: verbose)
                try UpFlow(
                    settings: settings, directory: directory, choices: choices, say: Console.say, show: events.show
                ).run()
            }
        }
    }
}
