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

    @Argument(
        help: ArgumentHelp(
            "How you log in to the VPS with ssh: [user@]host[:port] or a Host of ~/.ssh/config.", valueName: "target"))
    var target: String

    @OptionGroup var line: KeyLineOptions<Authorize>

    @Option(
        help: ArgumentHelp(
            "Where sshd reads authorized_keys on the VPS (sshd_config's AuthorizedKeysFile; relative to your home there).",
            valueName: "PATH"))
    var file = AuthorizedKeysPath.standard

    @Option(
        help: ArgumentHelp(
            "sshd's configuration on the VPS, read there to check that its AuthorizedKeysFile is --file.",
            valueName: "PATH"))
    var sshdConfig = AuthorizedKeysScript.sshdConfig

    @Option(
        help: ArgumentHelp(
            "Through a root login: put the keys in this dedicated account (created if missing) and close, for it, "
                + "what no key line can (an sshd drop-in beside --sshd-config: no Unix-socket, agent or X11 forwarding, "
                + "no terminal, no ~/.ssh/rc), checked with sshd -t, then sshd reloaded.", valueName: "NAME"))
    var account: String?

    @Option(help: ArgumentHelp("The sshd binary on the VPS, for --account's sshd -t and sshd -T.", valueName: "PATH"))
    var sshd = AccountAuthorization.standardSSHD

    func validate() throws {
        if let account, let problem = AccountDropIn.problem(account) { throw ValidationError("--account: \(problem)") }
        if let problem = AuthorizedKeysPath.problem(sshd) { throw ValidationError("--sshd: \(problem)") }
        try line.checkRemote()
        if !line.tunnelForward.isEmpty && line.listen {
            throw ValidationError("-L goes with the laptop's line; the home's line (--listen) takes -R")
        }
        if !line.homeForward.isEmpty && !line.listen {
            throw ValidationError("-R goes with --listen (the home's line); the laptop's line takes -L")
        }
        try refuseControlCharacters(file, option: "--file")
        if let problem = AuthorizedKeysPath.problem(file) { throw ValidationError("--file: \(problem)") }
        if let problem = AuthorizedKeysPath.problem(sshdConfig) { throw ValidationError("--sshd-config: \(problem)") }
        if let problem = UserSSH.targetProblem(target) { throw ValidationError(problem) }
        _ = try line.forwards()
    }

    func run() throws {
        let role: Role = line.listen ? .home : .tunnel
        let home = options.resolved
        let ends = Forward.vpsEnds(try line.forwards())
        // The proof signs in as `tunnel up` would (the ssh config's HostName, Port, User; the same host key trust).
        let flags = SettingsFlags(
            profile: try profile.resolved, target: target, remoteHost: line.remoteHost, remotePort: line.remotePort)
        let resolved: ResolvedSettings?
        do {
            resolved = try ResolvedSettings.load(flags: flags, directory: home, role: role)
        } catch {
            Console.say(
                "note: the line will not be proven: octunnel cannot sign in to \(target) itself (\(describe(error)))")
            resolved = nil
        }
        // With --account the key signs in as the account, at the host and port the login goes to.
        let signsInAs = resolved.map { settings in
            account.map { SSHTarget(user: $0, host: settings.target.host, port: settings.target.port) }
                ?? settings.target
        }
        let check = resolved.map { settings in
            var base = settings.connection(directory: home)
            base.target = signsInAs ?? base.target
            return KeyCheck(base: base)
        }
        try runReportingErrors {
            try home.checkPermissions()
            let store = KeyStore(directory: home)
            let key = try store.publicKey()
            let keys = KeyAuthorization(ssh: UserSSH(), target: target, file: file, sshdConfig: sshdConfig)
            let outcome =
                try account.flatMap(AccountDropIn.init(account:)).map {
                    try AccountAuthorization(keys: keys, dropIn: $0, sshd: sshd)
                        .authorize(
                            key: key, keyPath: store.privateKeyPath, role: role, ends: ends, check: check,
                            say: Console.say)
                }
                ?? keys.authorize(
                    key: key, keyPath: store.privateKeyPath, role: role, ends: ends, check: check, say: Console.say)
            Console.data(outcome.line)
            guard let proof = outcome.proof, let resolved, let signsInAs else { return }
            Console.say("Proven: key \(key.fingerprint) signs in\(account.map { " as \($0)" } ?? "") and \(proof).")
            try AuthorizedTargets(directory: home).add(signsInAs, role: role, closed: account != nil)
            if account != nil {
                Console.say("\(role) up signs in as the account: give it \(signsInAs) as its target.")
            } else {
                if resolved.sshConfig?.identityFile != nil && resolved.flags.identity == nil {
                    Console.say(
                        "\(role) up signs in to \(signsInAs) with this key from now on, before the ssh config's IdentityFile."
                    )
                }
                Console.say("note: \(AccountDropIn.advice(user: signsInAs.user))")
            }
        }
    }
}

extension Authorize: KeyLineWording {
    static let goesWith: [String] = []
    static let listenHelp = "The home machine's line (`home up`): the key may only ask the VPS to listen on its ports."
}

/// An error's one line, whoever threw it.
func describe(_ error: Error) -> String {
    return octunnelFailure(error)?.localizedDescription ?? "\(error)"
}
