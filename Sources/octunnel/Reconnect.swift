import ArgumentParser
import Foundation
import OCTunnelCore

/// `tunnel reconnect` and `home reconnect`: ask the running process of that role and profile
/// to drop its session and make a new one now (as SIGUSR1 does). Nothing running is exit 3.
struct ReconnectOptions: ParsableArguments {
    @Option(help: "Seconds to wait for the new session (0: only ask).")
    var wait: Int = Defaults.reconnectWaitSeconds

    @Flag(help: "Print one JSON object on stdout.")
    var json = false

    func validate() throws {
        guard (0...600).contains(wait) else { throw ValidationError("--wait must be 0-600 seconds") }
    }

    func run(role: Role, directory: DirectoryOptions, profile: ProfileOptions) throws {
        try runReportingErrors {
            let endpoint = StatusEndpoint(home: directory.resolved, role: role, profile: try profile.resolved)
            let request = ReconnectRequest(endpoint: endpoint)
            let startedAt = Date()
            let before = try request.send()
            if !json { Console.say("asked octunnel \(role) (pid \(before.pid)) to reconnect") }
            guard wait > 0 else {
                if json { Console.data(jsonLine(["event": "reconnectRequested", "pid": before.pid])) }
                return
            }
            guard let after = request.waitForNewSession(after: before, timeout: Double(wait)) else {
                throw OCTunnelError.statusNotAnswered(path: endpoint.path,
                                                      reason: "asked to reconnect, but no new session came up within \(wait) s; `octunnel \(role) status` says why")
            }
            let took = Date().timeIntervalSince(startedAt)
            if json {
                Console.data(jsonLine(["event": "reconnected", "pid": after.pid, "seconds": (took * 1000).rounded() / 1000,
                                       "reconnects": after.reconnects]))
            } else {
                Console.say(String(format: "reconnected in %.1f s (%d reconnects since start)", took, after.reconnects))
            }
        }
    }
}

extension Tunnel {
    struct Reconnect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the running `tunnel up` of this profile drop its session and connect again now (exit 3 if none runs)."
        )

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var options: ReconnectOptions

        func run() throws { try options.run(role: .tunnel, directory: directory, profile: profile) }
    }
}

/// `home reconnect`: the same for the home machine's `home up`.
struct HomeReconnect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconnect",
        abstract: "Make the running `home up` of this profile drop its session and connect again now (exit 3 if none runs)."
    )

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var profile: ProfileOptions
    @OptionGroup var options: ReconnectOptions

    func run() throws { try options.run(role: .home, directory: directory, profile: profile) }
}
