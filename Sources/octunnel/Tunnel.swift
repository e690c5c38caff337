import ArgumentParser
import Foundation
import OCTunnelCore

struct Tunnel: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run, check and describe the tunnel to the VPS.",
        subcommands: [Up.self]
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

    @Flag(help: "Print events as JSON lines on stdout.")
    var json = false

    func validate() throws {
        guard (1...3600).contains(connectTimeout) else { throw ValidationError("--connect-timeout must be 1-3600 seconds") }
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

        @Flag(help: "Log each client connection.")
        var verbose = false

        func validate() throws {
            if let localPort { try checkPort(localPort, "--local-port", allowZero: true) }
            guard (1...3600).contains(keepalive) else { throw ValidationError("--keepalive must be 1-3600 seconds") }
            if !Sockets.isLoopback(bind) && !allowLan {
                throw ValidationError("--bind \(bind) is not a loopback address: anyone on that network could use the tunnel. Add --allow-lan if that is what you want.")
            }
            if targetOptions.target == nil { throw ValidationError("missing target: octunnel tunnel up [user@]host[:port]") }
        }

        func run() throws {
            try runReportingErrors {
                let home = self.home.resolved
                try home.prepare()
                let target = try parseTarget(targetOptions.target!)
                let settings = ConnectionSettings(
                    target: target,
                    identityPath: connect.identity ?? home.privateKeyPath,
                    knownHostsPath: home.knownHostsPath,
                    connectTimeout: Double(connect.connectTimeout),
                    expectFingerprint: connect.expectFingerprint,
                    trustNew: !connect.noTrustNew,
                    remoteHost: targetOptions.remoteHost ?? "127.0.0.1",
                    remotePort: targetOptions.remotePort ?? 18080)
                _ = try KeyStore(home: home).loadPrivateKey(at: settings.identityPath)
                let options = TunnelOptions(connection: settings, bind: bind, localPort: localPort ?? 4096,
                                            keepalive: Double(keepalive), homePort: targetOptions.homePort ?? 4096)
                let json = connect.json
                let verbose = self.verbose
                let printer: @Sendable (TunnelEvent) -> Void = { event in
                    if json {
                        Console.data(jsonLine(event.jsonObject))
                    } else if verbose || !event.isVerbose {
                        Console.say(event.text)
                    }
                }
                if !Sockets.isLoopback(bind) {
                    printer(.warning("listening on \(bind): anyone who can reach this machine on that network can use the tunnel"))
                }
                let engine = try TunnelEngine(options: options, onEvent: printer)
                let reverse = ReverseCommand(target: target, remoteHost: settings.remoteHost, remotePort: settings.remotePort,
                                             homePort: options.homePort)
                if !json {
                    Console.say("home machine: keep this running there (the reverse tunnel):\n  \(reverse.render(.ssh))")
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
