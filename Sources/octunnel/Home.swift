import ArgumentParser
import Foundation
import OCTunnelCore

struct HomeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "home",
        abstract: "Run the home machine's side: the VPS listens, and each connection it forwards is carried to OpenCode here.",
        subcommands: [Up.self, HomeStatus.self]
    )
}

extension TunnelSettings {
    /// The home role's saved settings, seen through the fields `ResolvedTarget` reads.
    init(homeRole saved: HomeSettings) {
        self.init(host: saved.host, port: saved.port, username: saved.username, remotePort: saved.remotePort, localPort: 0,
                  homePort: saved.homePort, remoteHost: saved.remoteHost, agent: saved.agent, passwordFile: saved.passwordFile)
    }
}

extension HomeCommand {
    struct Up: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep the reverse tunnel from the VPS to OpenCode on this machine, in the foreground, until Ctrl-C."
        )

        @OptionGroup var home: HomeOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var targetOptions: TunnelTargetOptions
        @OptionGroup var connect: ConnectOptions

        @Option(help: "The address OpenCode listens on, on this machine.")
        var homeHost: String?

        @Option(help: "Seconds between keepalive probes; about three unanswered intervals mean the session is dead.")
        var keepalive: Int = 15

        @Flag(help: "Log each forwarded connection.")
        var verbose = false

        @Flag(help: "Skip the health test of the home port before listening.")
        var noHealth = false

        @Flag(help: "Save the target and ports as this machine's home settings for later runs (and `service install home`).")
        var save = false

        @Flag(help: "Close a forwarded connection OpenCode cannot take instead of answering it with an HTTP 502 naming the fix (for services that are not HTTP).")
        var noHttpErrors = false

        func validate() throws {
            guard (1...3600).contains(keepalive) else { throw ValidationError("--keepalive must be 1-3600 seconds") }
            if let homeHost { _ = try parseHostPort(homeHost.contains(":") ? "[\(homeHost)]" : homeHost) }
        }

        func run() throws {
            try runReportingErrors {
                let home = self.home.resolved
                try home.prepare()
                let profile = try self.profile.resolved
                let resolved = try ResolvedTarget(targetOptions, localPort: 0, home: home, profile: profile, role: .home)
                let saved = targetOptions.target == nil ? try SavedSettings.load(from: home, profile: profile)?.home : nil
                let settings = try resolved.connection(connect, home: home).preparedForSignIn(prompt: PassphrasePrompt())
                let homePort = HostPort(host: homeHost ?? saved?.homeHost ?? "127.0.0.1", port: resolved.homePort)
                let options = HomeForwardOptions(connection: settings, home: homePort, keepalive: Double(keepalive),
                                                 httpErrors: !noHttpErrors,
                                                 listenLine: listenLine(settings, home: home, remoteHost: resolved.remoteHost, remotePort: resolved.remotePort))
                let json = connect.json
                let verbose = self.verbose
                let say: @Sendable (TunnelEvent) -> Void = { event in
                    if json {
                        Console.data(jsonLine(event.jsonObject))
                    } else if verbose || !event.isVerbose {
                        Console.say(event.text)
                    }
                }
                let engine = try HomeEngine(options: options, onEvent: say)
                if save {
                    let saved = HomeSettings(host: resolved.target.host, port: resolved.target.port, username: resolved.target.user,
                                             remotePort: resolved.remotePort, homePort: homePort.port,
                                             remoteHost: resolved.remoteHost == "127.0.0.1" ? nil : resolved.remoteHost,
                                             homeHost: homePort.host == "127.0.0.1" ? nil : homePort.host,
                                             agent: settings.authentication == .agent ? true : nil,
                                             passwordFile: connect.passwordFilePath(saved: resolved.savedPasswordFile))
                    try saved.save(to: home, profile: profile)
                    let what = profile.isDefault ? "the default" : "profile \(profile)"
                    Console.say("saved \(resolved.target) as \(what) home settings in \(home.configPath)")
                }
                if !noHealth {
                    let health = HomeHealth(home: homePort, timeout: Double(connect.healthTimeout),
                                            credentials: try connect.credentials(saved: resolved.savedPasswordFile), json: json).run()
                    engine.recordHealth(health)
                }
                do {
                    try engine.serveStatus(at: StatusEndpoint(home: home, role: .home, profile: profile))
                } catch {
                    say(.warning("\(error); `octunnel home status` will not see this home side"))
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

        /// The authorized_keys line that lets this key listen (for the VPS-forbids-listening message).
        private func listenLine(_ settings: ConnectionSettings, home: OctunnelHome, remoteHost: String, remotePort: Int) -> String {
            var key: SSHPublicKey?
            if case .keyFile(let path) = settings.authentication {
                if path == home.privateKeyPath {
                    key = try? KeyStore(home: home).publicKey()
                } else if let text = try? String(contentsOfFile: path + ".pub", encoding: .utf8) {
                    key = SSHPublicKey.parse(line: text.trimmingCharacters(in: .whitespacesAndNewlines))
                }
            }
            guard let key else {
                return listenAuthorizedKeysOptions(remoteHost: remoteHost, remotePort: remotePort) + " <your public key>"
            }
            return listenAuthorizedKeysLine(key, remoteHost: remoteHost, remotePort: remotePort)
        }
    }
}

/// The health test straight against the home port, before listening: says whether OpenCode
/// runs here, never fatal (it may be started later; forwarded connections get a 502 meanwhile).
struct HomeHealth {
    let home: HostPort
    let timeout: Double
    let credentials: OpenCodeCredentials
    let json: Bool

    /// Runs the test, says how it went, and returns the result for `home status`.
    @discardableResult
    func run() -> StatusSnapshot.Health {
        do {
            let fd = try Sockets.connect(host: home.host, port: home.port, timeout: min(timeout, 5))
            close(fd)
        } catch {
            let reason: String
            if case .connectionRefused = error { reason = "connection refused" } else { reason = error.localizedDescription }
            report(TunnelEvent.homeUnreachable(home: home, reason: reason))
            return .init(ok: false, version: nil, checkedAt: Date(), detail: "nothing listens on \(home): \(reason)")
        }
        var check = HealthCheck(localPort: home.port, remote: home, reverseCommand: "", timeout: timeout, credentials: credentials)
        check.localHost = home.host
        do {
            let report = try check.run()
            if json {
                Console.data(jsonLine(["event": "health", "status": "connected", "healthy": true, "version": report.version,
                                       "api": report.generation.rawValue, "home": home.description, "password": credentials.usedText]))
            } else {
                Console.say("home health ✓ OpenCode \(report.version) (\(report.generation.label)) on \(home), event stream \(report.eventsPath) ready, \(credentials.usedText)")
            }
            return .init(ok: true, version: report.version, checkedAt: Date(),
                         detail: "OpenCode \(report.version) (\(report.generation.label)) on \(home)")
        } catch {
            if json {
                Console.data(jsonLine(["event": "health", "status": "error", "healthy": false, "layer": error.layer, "home": home.description,
                                       "message": error.localizedDescription, "exitCode": Int(error.exitStatus.rawValue)]))
            } else {
                Console.say("home health ✗ on \(home): \(error.localizedDescription)")
            }
            return .init(ok: false, version: nil, checkedAt: Date(), detail: error.localizedDescription)
        }
    }

    private func report(_ event: TunnelEvent) {
        if json { Console.data(jsonLine(event.jsonObject)) } else { Console.say(event.text) }
    }
}
