import ArgumentParser
import OCTunnelCore

struct Authorize: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Install this key's least-privilege line on the VPS through your own ssh login, then prove it works.",
        discussion: """
            Logs in with your ssh (your config, agent and ProxyJump; it may ask your password), adds the line `pubkey --restrict` \
            prints (with --listen, the home's) to authorized_keys once, creating ~/.ssh with the modes sshd wants and leaving every other \
            line as it was; then signs in with octunnel's key and opens its forward (or is granted its listen). The line's forced command \
            lets `keygen --rotate --install` replace the key later with no admin login.
            """
    )

    @OptionGroup var options: DirectoryOptions
    @OptionGroup var profile: ProfileOptions

    @Argument(help: ArgumentHelp("How you log in to the VPS with ssh: [user@]host[:port] or a Host of ~/.ssh/config.", valueName: "target"))
    var target: String

    @Flag(help: "The home machine's line (`home up`): the key may only ask the VPS to listen on its ports.")
    var listen = false

    @Option(help: "The VPS port the home reverse tunnel listens on.")
    var remotePort = Defaults.remotePort

    @Option(help: "The VPS address the home reverse tunnel listens on.")
    var remoteHost = Defaults.remoteHost

    @Option(name: [.customShort("L"), .customLong("tunnel-forward")],
            help: ArgumentHelp("Also allow this forward of `tunnel up -L`, as written there (repeatable).", valueName: "[BIND:]PORT:HOST:HOSTPORT"))
    var tunnelForward: [ForwardArgument<ListensHere>] = []

    @Option(name: [.customShort("R"), .customLong("home-forward")],
            help: ArgumentHelp("With --listen: also allow this forward of `home up -R`, as written there (repeatable).", valueName: "[VPS_BIND:]VPS_PORT:HOST:HOME_PORT"))
    var homeForward: [ForwardArgument<ListensOnVPS>] = []

    @Flag(help: "Allow a -L or -R listen off loopback, as `tunnel up --allow-lan` / `home up --allow-lan` do.")
    var allowLan = false

    @Option(help: ArgumentHelp("Where sshd reads authorized_keys on the VPS (sshd_config's AuthorizedKeysFile; relative to your home there).", valueName: "PATH"))
    var file = AuthorizedKeysPath.standard

    @Option(help: ArgumentHelp("sshd's configuration on the VPS, read there to check that its AuthorizedKeysFile is --file.", valueName: "PATH"))
    var sshdConfig = AuthorizedKeysScript.sshdConfig

    func validate() throws {
        try checkPort(remotePort, "--remote-port")
        _ = try parseHostPort(remoteHost.contains(":") ? "[\(remoteHost)]" : remoteHost)
        if !tunnelForward.isEmpty && listen { throw ValidationError("-L goes with the laptop's line; the home's line (--listen) takes -R") }
        if !homeForward.isEmpty && !listen { throw ValidationError("-R goes with --listen (the home's line); the laptop's line takes -L") }
        try refuseControlCharacters(file, option: "--file")
        if let problem = AuthorizedKeysPath.problem(file) { throw ValidationError("--file: \(problem)") }
        if let problem = AuthorizedKeysPath.problem(sshdConfig) { throw ValidationError("--sshd-config: \(problem)") }
        if let problem = UserSSH.targetProblem(target) { throw ValidationError(problem) }
        _ = try forwards()
    }

    /// The forwards the line is for, OpenCode's first, checked as `pubkey --restrict` checks them.
    private func forwards() throws -> [Forward] {
        let remote = HostPort(host: remoteHost, port: remotePort)
        let openCode = listen ? Forward(direction: .remote, listen: remote, target: HostPort(host: Defaults.homeHost, port: Defaults.homePort), isOpenCode: true)
            : Forward(direction: .local, listen: HostPort(host: Defaults.bind, port: Defaults.localPort), target: remote, isOpenCode: true)
        let others = listen ? try homeForward.forwards(defaultBind: remoteHost) : try tunnelForward.forwards(defaultBind: Defaults.bind)
        return try checkForwards([openCode] + others, allowLAN: allowLan)
    }

    func run() throws {
        let role: Role = listen ? .home : .tunnel
        let home = options.resolved
        let ends = Forward.vpsEnds(try forwards())
        // The proof signs in as `tunnel up` would (the ssh config's HostName, Port, User; the same host key trust).
        let flags = SettingsFlags(profile: try profile.resolved, target: target, remoteHost: remoteHost, remotePort: remotePort)
        let check: KeyCheck?
        do {
            check = KeyCheck(base: try ResolvedSettings.load(flags: flags, directory: home, role: role).connection(directory: home))
        } catch {
            Console.say("note: the line will not be proven: octunnel cannot sign in to \(target) itself (\(describe(error)))")
            check = nil
        }
        try runReportingErrors {
            try home.checkPermissions()
            let store = KeyStore(home: home)
            let key = try store.publicKey()
            let outcome = try KeyAuthorization(ssh: UserSSH(), target: target, file: file, sshdConfig: sshdConfig)
                .authorize(key: key, keyPath: store.privateKeyPath, role: role, ends: ends, check: check, say: Console.say)
            Console.data(outcome.line)
            if let proof = outcome.proof { Console.say("Proven: key \(key.fingerprint) signs in and \(proof).") }
        }
    }
}

/// An error's one line, whoever threw it.
func describe(_ error: Error) -> String {
    if let error = error as? SettingsError { return error.message }
    return (error as? OCTunnelError)?.localizedDescription ?? "\(error)"
}
