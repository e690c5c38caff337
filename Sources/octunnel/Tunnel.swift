import ArgumentParser
import Foundation
import OCTunnelCore

struct Tunnel: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run, check and describe the tunnel to the VPS.",
        subcommands: [Up.self, Check.self, ReverseCommandCommand.self]
    )
}

/// Options shared by `tunnel up`, `check` and `reverse-command`.
struct TunnelTargetOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The VPS: [user@]host[:port] (IPv6 as user@[::1]:2222). Default: the saved one.", valueName: "target"))
    var target: String?

    @Option(help: "The VPS port the home machine's reverse tunnel listens on.")
    var remotePort: Int?

    @Option(help: "The VPS address the reverse tunnel listens on.")
    var remoteHost: String?

    @Option(help: "The OpenCode port on the home machine (used in the printed reverse-tunnel command).")
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

    init(_ options: TunnelTargetOptions, localPort: Int?, home: OctunnelHome) throws {
        var saved = try SavedSettings.load(from: home)
        if let text = options.target {
            target = try parseTarget(text)
            // The saved ports belong to the saved VPS: another one starts from the defaults.
            if let settings = saved, settings.host != target.host || settings.port != target.port { saved = nil }
        } else if let saved {
            target = saved.target
        } else {
            throw ValidationError("missing target: give [user@]host[:port] (or save one with `octunnel tunnel up TARGET --save`)")
        }
        remoteHost = options.remoteHost ?? saved?.remoteHost ?? "127.0.0.1"
        remotePort = options.remotePort ?? saved?.remotePort ?? 18080
        homePort = options.homePort ?? saved?.homePort ?? 4096
        self.localPort = localPort ?? saved?.localPort ?? 4096
    }

    var settings: SavedSettings {
        SavedSettings(host: target.host, port: target.port, username: target.user, remotePort: remotePort, localPort: localPort, homePort: homePort,
                      remoteHost: remoteHost == "127.0.0.1" ? nil : remoteHost)
    }

    func connection(_ connect: ConnectOptions, home: OctunnelHome) -> ConnectionSettings {
        ConnectionSettings(target: target, identityPath: connect.identity ?? home.privateKeyPath, knownHostsPath: home.knownHostsPath,
                           connectTimeout: Double(connect.connectTimeout), expectFingerprint: connect.expectFingerprint,
                           trustNew: !connect.noTrustNew, remoteHost: remoteHost, remotePort: remotePort)
    }

    var reverse: ReverseCommand {
        ReverseCommand(target: target, remoteHost: remoteHost, remotePort: remotePort, homePort: homePort)
    }
}

/// Options of a live connection (`up` and `check`).
struct ConnectOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The private key to sign in with (default: octunnel's id_ed25519).", valueName: "PATH"))
    var identity: String?

    @Option(help: "Seconds to wait for the VPS to answer.")
    var connectTimeout: Int = 30

    @Option(help: ArgumentHelp("Refuse the VPS unless its host key has this fingerprint.", valueName: "SHA256:…"))
    var expectFingerprint: String?

    @Flag(help: "Refuse a VPS whose host key is not known yet (no trust on first use).")
    var noTrustNew = false

    @Flag(help: "Print events as JSON on stdout.")
    var json = false

    @Option(help: "Seconds the health test and the event stream may take.")
    var healthTimeout: Int = 5

    func validate() throws {
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
        @OptionGroup var targetOptions: TunnelTargetOptions
        @OptionGroup var connect: ConnectOptions

        @Option(help: "The local port clients connect to (0 picks a free one).")
        var localPort: Int?

        @Option(help: "The local address to listen on.")
        var bind = "127.0.0.1"

        @Flag(help: "Allow a non-loopback --bind (anyone on that network could use the tunnel).")
        var allowLan = false

        @Option(help: "Seconds between keepalive probes; about three unanswered intervals mean the session is dead.")
        var keepalive: Int = 15

        @Option(help: ArgumentHelp("Channels to keep open ahead of need, each an idle connection the VPS opens to the home server (default: follow demand, 1-8; 0 turns it off).", valueName: "N"))
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
            if !Sockets.isLoopback(bind) && !allowLan {
                throw ValidationError("--bind \(bind) is not a loopback address: anyone on that network could use the tunnel. Add --allow-lan if that is what you want.")
            }
        }

        func run() throws {
            try runReportingErrors {
                let home = self.home.resolved
                try home.prepare()
                let resolved = try ResolvedTarget(targetOptions, localPort: localPort, home: home)
                let settings = resolved.connection(connect, home: home)
                _ = try KeyStore(home: home).loadPrivateKey(at: settings.identityPath)
                let options = TunnelOptions(connection: settings, bind: bind, localPort: resolved.localPort,
                                            keepalive: Double(keepalive), homePort: resolved.homePort, warm: warm)
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
                                          bind: bind)
                let engineBox = EngineBox()
                let engine = try TunnelEngine(options: options) { event in
                    say(event)
                    if case .connected = event, let port = engineBox.port { health.start(localPort: port, engine: engineBox.engine) }
                    if case .forwarding(let local, _) = event {
                        engineBox.port = local.port
                        health.start(localPort: local.port, engine: engineBox.engine)
                    }
                }
                engineBox.engine = engine
                if save {
                    try resolved.settings.save(to: home)
                    Console.say("saved \(resolved.target) as the default in \(home.configPath)")
                }
                if !json {
                    Console.say("home machine: keep this running there (the reverse tunnel):\n  \(resolved.reverse.render(.ssh))")
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

    func start(localPort: Int, engine: TunnelEngine?) {
        guard enabled else { return }
        let thread = Thread {
            var check = HealthCheck(localPort: localPort, remote: remote, reverseCommand: reverseCommand, timeout: timeout)
            check.forwardRefusal = { engine?.lastForwardRefusal }
            check.localHost = HealthCheck.address(forBind: bind)
            do {
                let report = try check.run()
                if json {
                    Console.data(jsonLine(["event": "health", "status": "connected", "healthy": true, "version": report.version,
                                           "ms": report.healthMilliseconds, "eventsMs": report.eventsMilliseconds]))
                } else {
                    Console.say("health ✓ OpenCode \(report.version) healthy through \(host) (\(report.healthMilliseconds) ms), event stream ready (\(report.eventsMilliseconds) ms)")
                }
            } catch let error as OCTunnelError {
                if json {
                    Console.data(jsonLine(["event": "health", "status": "error", "healthy": false, "layer": error.layer,
                                           "message": error.localizedDescription]))
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
        @OptionGroup var targetOptions: TunnelTargetOptions
        @OptionGroup var connect: ConnectOptions

        func run() throws {
            try runReportingErrors {
                let home = self.home.resolved
                try home.prepare()
                let resolved = try ResolvedTarget(targetOptions, localPort: 0, home: home)
                let settings = resolved.connection(connect, home: home)
                _ = try KeyStore(home: home).loadPrivateKey(at: settings.identityPath)
                let options = TunnelOptions(connection: settings, localPort: 0, homePort: resolved.homePort)
                let json = connect.json
                let result = TunnelCheck(options: options, healthTimeout: Double(connect.healthTimeout)).run { stage in
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
        static let configuration = CommandConfiguration(
            commandName: "reverse-command",
            abstract: "Print what the home machine runs to keep its reverse tunnel to the VPS (stdout)."
        )

        @OptionGroup var home: HomeOptions
        @OptionGroup var targetOptions: TunnelTargetOptions

        @Option(help: "ssh, autossh, systemd (a user unit) or launchd (a LaunchAgent plist).")
        var format: String = "ssh"

        func validate() throws {
            guard ReverseCommand.Format(rawValue: format) != nil else {
                throw ValidationError("--format must be one of: \(ReverseCommand.Format.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }

        func run() throws {
            try runReportingErrors {
                let resolved = try ResolvedTarget(targetOptions, localPort: nil, home: home.resolved)
                let text = resolved.reverse.render(ReverseCommand.Format(rawValue: format)!)
                Console.data(text.hasSuffix("\n") ? String(text.dropLast()) : text)
            }
        }
    }
}
