import ArgumentParser
import Foundation
import OCTunnelCore

struct Tunnel: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run, check and describe the tunnel to the VPS.",
        subcommands: [Up.self, Status.self, Check.self, ReverseCommandCommand.self]
    )
}

/// Options shared by `tunnel up`, `check` and `reverse-command`.
struct TunnelTargetOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The VPS: [user@]host[:port] (IPv6 as user@[::1]:2222), or a Host of ~/.ssh/config. Default: the saved one.", valueName: "target"))
    var target: String?

    @Option(help: "The VPS port the home machine's reverse tunnel listens on.")
    var remotePort: Int?

    @Option(help: "The VPS address the reverse tunnel listens on.")
    var remoteHost: String?

    @Option(help: "The OpenCode port on the home machine (what `home up` connects to, and the printed reverse-tunnel command's target): 4096 for `opencode serve` (default), 49374 for OpenCode 2's background service (49375 on its `local` channel; `opencode service status` prints it).")
    var homePort: Int?

    func validate() throws {
        if let target { _ = try parseTarget(target) }
        if let remotePort { try checkPort(remotePort, "--remote-port") }
        if let homePort { try checkPort(homePort, "--home-port") }
        if let remoteHost { _ = try parseHostPort(remoteHost.contains(":") ? "[\(remoteHost)]" : remoteHost) }
    }
}

/// The target and ports of an invocation, falling back to the saved settings.
struct ResolvedTarget {
    let target: SSHTarget
    let remoteHost: String
    let remotePort: Int
    let homePort: Int
    let localPort: Int
    /// What ~/.ssh/config said about the typed target (nil for the saved one).
    let sshConfig: SSHConfigResolution?
    /// The saved settings say to sign in with the ssh-agent.
    let savedAgent: Bool
    /// The saved settings' OpenCode password file (`--password-file` given with `--save`).
    let savedPasswordFile: String?

    init(_ options: TunnelTargetOptions, localPort: Int?, home: OctunnelHome, profile: ProfileName, role: Role = .tunnel) throws {
        let all = try SavedSettings.load(from: home, profile: profile)
        var saved = role == .tunnel ? all?.tunnel : all?.home.map(TunnelSettings.init(homeRole:))
        if let text = options.target {
            _ = try parseTarget(text)
            let resolution = try SSHConfigResolver().resolve(text)
            if !resolution.ignored.isEmpty, case .file(let path) = resolution.source {
                Console.say("note: without the ssh client, octunnel read \(SSHConfigResolver().displayPath(path)) for HostName, User, Port and IdentityFile only; ignored for \(text): \(resolution.ignored.joined(separator: ", "))")
            }
            sshConfig = resolution
            target = resolution.target
            // The saved ports belong to the saved VPS: another one starts from the defaults.
            if let settings = saved, settings.host != target.host || settings.port != target.port { saved = nil }
        } else if let saved {
            target = saved.target
            sshConfig = nil
        } else {
            let option = profile.isDefault ? "" : " --profile \(profile)"
            throw ValidationError("missing target: give [user@]host[:port] (or save one with `octunnel \(role.rawValue) up TARGET --save\(option)`)")
        }
        remoteHost = options.remoteHost ?? saved?.remoteHost ?? "127.0.0.1"
        remotePort = options.remotePort ?? saved?.remotePort ?? 18080
        homePort = options.homePort ?? saved?.homePort ?? 4096
        self.localPort = localPort ?? saved?.localPort ?? 4096
        savedAgent = saved?.agent ?? false
        savedPasswordFile = saved?.passwordFile
    }

    var settings: TunnelSettings {
        TunnelSettings(host: target.host, port: target.port, username: target.user, remotePort: remotePort, localPort: localPort, homePort: homePort,
                      remoteHost: remoteHost == "127.0.0.1" ? nil : remoteHost)
    }

    func connection(_ connect: ConnectOptions, home: OctunnelHome) -> ConnectionSettings {
        let useAgent = connect.agent || (savedAgent && connect.identity == nil)
        let keyPath = connect.identity ?? sshConfig?.identityFile ?? home.privateKeyPath
        var settings = ConnectionSettings(target: target, authentication: useAgent ? .agent : .keyFile(keyPath),
                                          knownHostsPath: home.knownHostsPath,
                                          connectTimeout: Double(connect.connectTimeout), expectFingerprint: connect.expectFingerprint,
                                          trustNew: !connect.noTrustNew, remoteHost: remoteHost, remotePort: remotePort)
        if !useAgent, connect.identity == nil, let config = sshConfig, config.identityFile == nil, !config.skippedIdentities.isEmpty {
            Console.say("note: the ssh config's IdentityFile \(config.skippedIdentities.joined(separator: ", ")) is not a key octunnel can sign with; using \(keyPath)")
        }
        if !connect.noOpensshKnownHosts {
            settings.openSSHKnownHosts = .standard(home: SSHConfigResolver().home, resolution: sshConfig)
        }
        return settings
    }

    var reverse: ReverseCommand {
        ReverseCommand(target: target, remoteHost: remoteHost, remotePort: remotePort, homePort: homePort)
    }
}

/// Options of a live connection (`up` and `check`).
struct ConnectOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The private key to sign in with (default: octunnel's id_ed25519); an encrypted one asks for its passphrase once.", valueName: "PATH"))
    var identity: String?

    @Flag(help: "Sign in with the keys of the ssh-agent at $SSH_AUTH_SOCK (Ed25519, ECDSA), in its order; no key file is read.")
    var agent = false

    @Option(help: "Seconds to wait for the VPS to answer.")
    var connectTimeout: Int = 30

    @Option(help: ArgumentHelp("Refuse the VPS unless its host key has this fingerprint.", valueName: "SHA256:…"))
    var expectFingerprint: String?

    @Flag(help: "Refuse a VPS whose host key is not known yet (no trust on first use).")
    var noTrustNew = false

    @Flag(help: "Do not look a new VPS up in ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts before trusting it on first use.")
    var noOpensshKnownHosts = false

    @Flag(help: "Print events as JSON on stdout.")
    var json = false

    @Option(help: "Seconds the health test and the event stream may take.")
    var healthTimeout: Int = 5

    @Option(help: ArgumentHelp("A file holding OpenCode's password (only you may read it, like a key; one trailing newline is dropped). Default: the saved one, else $OPENCODE_PASSWORD, else $OPENCODE_SERVER_PASSWORD (set but empty: no password).", valueName: "PATH"))
    var passwordFile: String?

    /// The OpenCode user and password for the health test (read here, before any network work).
    /// `--password-file` if given, else the saved one, else `OPENCODE_PASSWORD`, else
    /// `OPENCODE_SERVER_PASSWORD` (see `OpenCodeCredentials.load`).
    func credentials(saved: String?) throws -> OpenCodeCredentials {
        try OpenCodeCredentials.load(passwordFile: passwordFile.map(UserPath.absolute), savedPasswordFile: saved)
    }

    /// The password file this run uses, as an absolute path (what `--save` remembers).
    func passwordFilePath(saved: String?) -> String? {
        passwordFile.map(UserPath.absolute) ?? saved
    }

    func validate() throws {
        if agent && identity != nil { throw ValidationError("--agent and --identity cannot be combined: pick one way to sign in") }
        try refuseControlCharacters(identity, option: "--identity")
        try refuseControlCharacters(passwordFile, option: "--password-file")
        guard (1...3600).contains(connectTimeout) else { throw ValidationError("--connect-timeout must be 1-3600 seconds") }
        guard (1...600).contains(healthTimeout) else { throw ValidationError("--health-timeout must be 1-600 seconds") }
        if let expectFingerprint, !Fingerprint.isValid(expectFingerprint) {
            throw ValidationError("--expect-fingerprint must look like SHA256:<43 base64 characters>, as `ssh-keygen -lf` prints")
        }
    }
}

extension Tunnel {
    struct Up: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forward a local port to the VPS over SSH, in the foreground, until Ctrl-C."
        )

        @OptionGroup var home: HomeOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var targetOptions: TunnelTargetOptions
        @OptionGroup var connect: ConnectOptions

        @Option(help: "The local port clients connect to (0 picks a free one).")
        var localPort: Int?

        @Option(help: "The local address to listen on, and only it (default: 127.0.0.1 and, where the machine has IPv6, ::1, on the same port, as `ssh -L`).")
        var bind: String?

        @Flag(help: "Allow a non-loopback --bind (anyone on that network could use the tunnel).")
        var allowLan = false

        @Option(help: "Seconds between keepalive probes; about three unanswered intervals mean the session is dead.")
        var keepalive: Int = 15

        @Option(help: ArgumentHelp("Channels to keep open ahead of need, each an idle connection the VPS opens to the home server (default: follow demand, 1-32; 0 turns it off).", valueName: "N"))
        var warm: Int?

        @Flag(help: "Log each client connection.")
        var verbose = false

        @Flag(help: "Skip the health test after connecting.")
        var noHealth = false

        @Flag(help: "Save the target and ports as the default for later runs.")
        var save = false

        func validate() throws {
            if let localPort { try checkPort(localPort, "--local-port", allowZero: true) }
            guard (1...3600).contains(keepalive) else { throw ValidationError("--keepalive must be 1-3600 seconds") }
            if let warm, !(0...64).contains(warm) { throw ValidationError("--warm must be 0-64 channels") }
            if let bind, !Sockets.isLoopback(bind) && !allowLan {
                throw ValidationError("--bind \(bind) is not a loopback address: anyone on that network could use the tunnel. Add --allow-lan if that is what you want.")
            }
        }

        func run() throws {
            try runReportingErrors {
                let home = self.home.resolved
                try home.prepare()
                let profile = try self.profile.resolved
                let resolved = try ResolvedTarget(targetOptions, localPort: localPort, home: home, profile: profile)
                let settings = try resolved.connection(connect, home: home).preparedForSignIn(prompt: PassphrasePrompt())
                let bind = self.bind ?? "127.0.0.1"
                var options = TunnelOptions(connection: settings, bind: bind, localPort: resolved.localPort,
                                            keepalive: Double(keepalive), homePort: resolved.homePort, warm: warm)
                options.alsoIPv6Loopback = self.bind == nil
                let json = connect.json
                let verbose = self.verbose
                let say: @Sendable (TunnelEvent) -> Void = { event in
                    if json {
                        Console.data(jsonLine(event.jsonObject))
                    } else if verbose || !event.isVerbose {
                        Console.say(event.text)
                    }
                }
                if !Sockets.isLoopback(bind) {
                    say(.warning("listening on \(bind): anyone who can reach this machine on that network can use the tunnel"))
                }
                let health = HealthRunner(enabled: !noHealth, timeout: Double(connect.healthTimeout), remote: options.remote,
                                          reverseCommand: resolved.reverse.render(.ssh), host: resolved.target.host, json: json,
                                          bind: bind, credentials: noHealth ? OpenCodeCredentials() : try connect.credentials(saved: resolved.savedPasswordFile))
                let engineBox = EngineBox()
                let engine = try TunnelEngine(options: options) { event in
                    say(event)
                    if case .connected = event, let port = engineBox.port { health.start(localPort: port, engine: engineBox.engine) }
                    if case .forwarding(let local, _, _) = event {
                        engineBox.port = local.port
                        health.start(localPort: local.port, engine: engineBox.engine)
                    }
                }
                engineBox.engine = engine
                do {
                    try engine.serveStatus(at: StatusEndpoint(home: home, role: .tunnel, profile: profile))
                } catch {
                    say(.warning("\(error); `octunnel tunnel status` will not see this tunnel"))
                }
                if save {
                    var saved = resolved.settings
                    saved.agent = settings.authentication == .agent ? true : nil
                    saved.passwordFile = connect.passwordFilePath(saved: resolved.savedPasswordFile)
                    try saved.save(to: home, profile: profile)
                    let what = profile.isDefault ? "the default" : "profile \(profile)"
                    Console.say("saved \(resolved.target) as \(what) in \(home.configPath)")
                }
                if !json {
                    Console.say("home machine: keep this running there (the reverse tunnel):\n  \(resolved.reverse.render(.ssh))\n  or, with octunnel there: \(resolved.reverse.render(.home))")
                }
                engine.handleSignals()
                do {
                    try engine.run()
                } catch let error as OCTunnelError {
                    if json { Console.data(jsonLine(["event": "error", "status": "error", "message": error.localizedDescription, "exitCode": Int(error.exitStatus.rawValue)])) }
                    throw error
                }
            }
        }
    }
}

/// The forwarded port, learnt from the first `forwarding` event, and the engine itself (its
/// event handler is made before it), for the health test to ask why a forward was refused.
final class EngineBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int?
    private weak var held: TunnelEngine?
    var port: Int? {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }
    var engine: TunnelEngine? {
        get { lock.lock(); defer { lock.unlock() }; return held }
        set { lock.lock(); held = newValue; lock.unlock() }
    }
}

/// Runs the health test on its own thread each time a session comes up; a failure is said,
/// never fatal.
struct HealthRunner: Sendable {
    let enabled: Bool
    let timeout: Double
    let remote: HostPort
    let reverseCommand: String
    let host: String
    let json: Bool
    let bind: String
    let credentials: OpenCodeCredentials

    func start(localPort: Int, engine: TunnelEngine?) {
        guard enabled else { return }
        let thread = Thread {
            var check = HealthCheck(localPort: localPort, remote: remote, reverseCommand: reverseCommand, timeout: timeout,
                                    credentials: credentials)
            check.forwardRefusal = { engine?.lastForwardRefusal }
            check.localHost = HealthCheck.address(forBind: bind)
            do {
                let report = try check.run()
                engine?.recordHealth(.init(ok: true, version: report.version, checkedAt: Date(),
                                           detail: "OpenCode \(report.version) (\(report.generation.label)) through \(host), event stream \(report.eventsPath) ready"))
                if json {
                    Console.data(jsonLine(["event": "health", "status": "connected", "healthy": true, "version": report.version,
                                           "api": report.generation.rawValue, "path": report.healthPath, "eventsPath": report.eventsPath,
                                           "password": credentials.usedText,
                                           "ms": report.healthMilliseconds, "eventsMs": report.eventsMilliseconds]))
                } else {
                    Console.say("health ✓ OpenCode \(report.version) (\(report.generation.label)) healthy through \(host) (\(report.healthMilliseconds) ms), event stream \(report.eventsPath) ready (\(report.eventsMilliseconds) ms), \(credentials.usedText)")
                }
            } catch let error as OCTunnelError {
                engine?.recordHealth(.init(ok: false, version: nil, checkedAt: Date(), detail: error.localizedDescription))
                if json {
                    Console.data(jsonLine(["event": "health", "status": "error", "healthy": false, "layer": error.layer,
                                           "message": error.localizedDescription, "exitCode": Int(error.exitStatus.rawValue)]))
                } else {
                    Console.say("health ✗ \(error.localizedDescription)")
                }
            } catch {
                Console.say("health ✗ \(error)")
            }
        }
        thread.start()
    }
}

extension Tunnel {
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Walk every layer once (resolve, TCP, SSH, host key, key, forward, health, events) and say which broke."
        )

        @OptionGroup var home: HomeOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var targetOptions: TunnelTargetOptions
        @OptionGroup var connect: ConnectOptions

        func run() throws {
            try runReportingErrors {
                let home = self.home.resolved
                try home.prepare()
                let resolved = try ResolvedTarget(targetOptions, localPort: 0, home: home, profile: try profile.resolved)
                let settings = try resolved.connection(connect, home: home).preparedForSignIn(prompt: PassphrasePrompt())
                let options = TunnelOptions(connection: settings, localPort: 0, homePort: resolved.homePort)
                let json = connect.json
                let credentials = try connect.credentials(saved: resolved.savedPasswordFile)
                let result = TunnelCheck(options: options, healthTimeout: Double(connect.healthTimeout), credentials: credentials).run { stage in
                    guard !json else { return }
                    Console.say("\(stage.ok ? "✓" : "✗") \(stage.name) (\(stage.milliseconds) ms): \(stage.detail)")
                }
                if json {
                    let stages: [[String: Any]] = result.stages.map { ["name": $0.name, "ok": $0.ok, "ms": $0.milliseconds, "detail": $0.detail] }
                    var verdict: [String: Any] = ["ok": result.failure == nil, "stages": stages, "exitCode": Int(result.exitStatus.rawValue)]
                    if let failure = result.failure { verdict["layer"] = failure.layer; verdict["message"] = failure.localizedDescription }
                    Console.data(jsonLine(verdict))
                } else if result.failure == nil {
                    Console.say("all layers ✓: OpenCode is reachable through \(resolved.target.host)")
                }
                if result.failure != nil { throw ExitCode(result.exitStatus.rawValue) }
            }
        }
    }

    struct ReverseCommandCommand: ParsableCommand {
        /// This binary's absolute path, for units that run `octunnel home up` (the home machine
        /// may keep it elsewhere: the unit says which binary it ran here).
        static var octunnelPath: String {
            let path = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
            return path.hasPrefix("/") ? path : "/usr/local/bin/octunnel"
        }

        static let configuration = CommandConfiguration(
            commandName: "reverse-command",
            abstract: "Print what the home machine runs to keep its reverse tunnel to the VPS (stdout)."
        )

        @OptionGroup var home: HomeOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var targetOptions: TunnelTargetOptions

        @Option(help: "ssh, autossh, systemd (a user unit) or launchd (a LaunchAgent plist); home, home-systemd, home-launchd: the same with `octunnel home up` instead of ssh.")
        var format: String = "ssh"

        func validate() throws {
            guard ReverseCommand.Format(rawValue: format) != nil else {
                throw ValidationError("--format must be one of: \(ReverseCommand.Format.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }

        func run() throws {
            try runReportingErrors {
                let resolved = try ResolvedTarget(targetOptions, localPort: nil, home: home.resolved, profile: try profile.resolved)
                var reverse = resolved.reverse
                reverse.octunnelPath = ReverseCommandCommand.octunnelPath
                let text = reverse.render(ReverseCommand.Format(rawValue: format)!)
                Console.data(text.hasSuffix("\n") ? String(text.dropLast()) : text)
            }
        }
    }
}
