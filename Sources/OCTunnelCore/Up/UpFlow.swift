import Foundation

/// `tunnel up` and `home up` from their resolved settings to their end, one sequence for both
/// roles (issue 49; it was written twice in the executable, in two orders): sign in (an
/// encrypted key's passphrase asked once), build the role's options, check its forwards, read
/// OpenCode's password, build the runner, save when asked, start the health test, serve
/// `status`, run until Ctrl-C. Talk goes to `say` (stderr), events to `show` (the one printer).
public struct UpFlow: Sendable {
    /// The choices of one run that are not saved settings.
    public struct Choices: Sendable {
        /// Seconds between keepalive probes.
        public var keepalive: Double
        /// Allow a listen off loopback (`--allow-lan`).
        public var allowLAN = false
        /// Run the health test (`--no-health`: false).
        public var health = true
        /// Save the settings for later runs (`--save`).
        public var save = false
        /// `--password-file` as given (made absolute here), nil when not given.
        public var passwordFile: String?
        /// Seconds the health test and the event stream may take.
        public var healthTimeout: Double
        /// `tunnel up`: channels kept open ahead of need (nil: follow demand).
        public var warm: Int?
        /// `tunnel up`: say on stderr what the home machine runs (text mode).
        public var homeHint = true
        /// `home up`: answer a connection OpenCode cannot take with a 502 (`--no-http-errors`: false).
        public var httpErrors = true

        public init(keepalive: Double, healthTimeout: Double) {
            self.keepalive = keepalive
            self.healthTimeout = healthTimeout
        }
    }

    public let settings: ResolvedSettings
    public let directory: OctunnelDirectory
    public let choices: Choices
    private let say: @Sendable (String) -> Void
    private let show: @Sendable (UpEvent) -> Void

    public init(
        settings: ResolvedSettings, directory: OctunnelDirectory, choices: Choices,
        say: @escaping @Sendable (String) -> Void, show: @escaping @Sendable (UpEvent) -> Void
    ) {
        self.settings = settings
        self.directory = directory
        self.choices = choices
        self.say = say
        self.show = show
    }

    /// Runs the settings' role until it is stopped (returns) or fails in a way retrying cannot fix (throws).
    public func run() throws {
        let connection = try settings.signIn(directory: directory, say: say)
        let runner: UpRunner
        let healthCheck: (() -> Void)?
        switch settings.role {
        case .tunnel:
            var options = settings.tunnelOptions(connection, keepalive: choices.keepalive, warm: choices.warm)
            options.pairPort = settings.pairPort
            try options.checkForwards(allowLAN: choices.allowLAN)
            if let warning = UpRunner.exposureWarning(bind: options.openCode.listen.host) { show(.engine(warning)) }
            var health: TunnelHealth?
            if choices.health {
                let credentials = try settings.credentials(passwordFile: choices.passwordFile)
                health = TunnelHealth(options: options, timeout: choices.healthTimeout, credentials: credentials)
                health?.wiring = UpWiring(notify: settings.notify, credentials: credentials, pairPort: options.pairPort)
            }
            runner = try UpRunner(tunnel: options, health: health, onEvent: show)
            healthCheck = nil
        case .home:
            var options = settings.homeForwardOptions(
                connection, directory: directory, keepalive: choices.keepalive, httpErrors: choices.httpErrors)
            let openCode = HomeOpenCode.choose(configured: options.openCode.target, portGiven: settings.homePortChosen)
            options.openCode.target = openCode.home
            options.followService = openCode.service != nil && settings.flags.homeHost == nil
            try options.checkForwards(allowLAN: choices.allowLAN)
            let credentials =
                choices.health
                ? openCode.credentials(given: try settings.credentials(passwordFile: choices.passwordFile)) : nil
            let wiring = credentials.flatMap {
                settings.notify.enabled ? UpWiring(notify: settings.notify, credentials: $0) : nil
            }
            runner = try UpRunner(home: options, wiring: wiring, healthTimeout: choices.healthTimeout, onEvent: show)
            for line in openCode.lines { show(.engine(.openCodeHome(home: openCode.home, detail: line))) }
            healthCheck = credentials.map { credentials in
                { runner.checkHealth(timeout: choices.healthTimeout, credentials: credentials) }
            }
        }
        if choices.save { try save(signedInWith: connection) }
        healthCheck?()
        runner.serveStatus(
            at: StatusEndpoint(directory: directory, role: settings.role, profile: settings.flags.profile))
        if settings.role == .tunnel && choices.homeHint { say(Self.homeMachineHint(settings.reverse)) }
        try runner.run()
    }

    /// `--save`: the settings become the profile's section of their role, said on stderr.
    private func save(signedInWith connection: ConnectionSettings) throws {
        let passwordFile = choices.passwordFile.map(UserPath.absolute) ?? settings.savedPasswordFile
        try settings.save(to: directory, agent: connection.authentication == .agent, passwordFile: passwordFile)
        let profile = settings.flags.profile
        let what = profile.isDefault ? "the default" : "profile \(profile)"
        say(
            "saved \(settings.target) as \(what)\(settings.role == .home ? " home settings" : "") in \(directory.configPath)"
        )
    }

    /// What to keep running on the home machine, said once in text mode.
    static func homeMachineHint(_ reverse: ReverseCommand) -> String {
        "home machine: keep this running there (the reverse tunnel):\n "
            + " \(reverse.render(.ssh))\n  or, with octunnel there: \(reverse.render(.home))"
    }
}
