import ArgumentParser
import Foundation
import OCTunnelCore

/// `tunnel reconnect` and `home reconnect`: ask the running process of that role and profile
/// to drop its session and make a new one now (as SIGUSR1 does). Nothing running is exit 3.
struct ReconnectOptions: RoleAction {
    @Option(help: "Seconds to wait for the new session (0: only ask).")
    var wait: Int = Defaults.reconnectWaitSeconds

    @Flag(help: "Print one JSON object on stdout.")
    var json = false

    func validate() throws {
        guard (0...600).contains(wait) else { throw ValidationError("--wait must be 0-600 seconds") }
    }

    static var commandName: String { "reconnect" }

    static func abstract(up: String) -> String {
        "Make the running `\(up)` of this profile drop its session and connect again now (exit 3 if none runs)."
    }

    /// Asks the role's process to reconnect and says how it went.
    func run(endpoint: StatusEndpoint) throws {
        let role = endpoint.role
        let outcome = try ReconnectRequest(endpoint: endpoint).run(wait: wait, role: role) { pid in
            if !json { Console.say("asked octunnel \(role) (pid \(pid)) to reconnect") }
        }
        switch outcome {
        case .asked(let pid):
            if json { Console.data(jsonLine(["event": "reconnectRequested", "pid": pid])) }
        case .reconnected(let pid, let seconds, let reconnects):
            if json {
                Console.data(
                    jsonLine([
                        "event": "reconnected", "pid": pid, "seconds": (seconds * 1000).rounded() / 1000,
                        "reconnects": reconnects,
                    ]))
            } else {
                Console.say(
                    String(format: "reconnected in %.1f s (%d reconnects since start)", seconds, reconnects))
            }
        }
    }
}

extension Tunnel {
    /// `tunnel reconnect`.
    typealias Reconnect = RoleCommand<TunnelSide, ReconnectOptions>
}

/// `home reconnect`: the same for the home machine's `home up`.
typealias HomeReconnect = RoleCommand<HomeSide, ReconnectOptions>
