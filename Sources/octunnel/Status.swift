import ArgumentParser
import OCTunnelCore

/// `tunnel status` and `home status`: ask the running process of that role and profile
/// through its status socket. Never starts anything; nothing running is exit 3.
struct StatusOptions: RoleAction {
    @Flag(
        help: ArgumentHelp(
            "Print one JSON object on stdout (state, target, " + "hostKey, cipher, connectedSince, local, remote, "
                + "openConnections, totalConnections, bytesIn, bytesOut, reconnects, lastError, health)."))
    var json = false

    static var commandName: String { "status" }

    static func abstract(up: String) -> String {
        "Show how the running `\(up)` of this profile is doing (exit 3 if none runs)."
    }

    /// Prints the status of the role's process (stdout), or fails with one line (stderr).
    func run(endpoint: StatusEndpoint) throws {
        let snapshot = try StatusClient(endpoint: endpoint).query()
        if json {
            Console.data(snapshot.jsonText)
        } else {
            snapshot.humanLines().forEach(Console.data)
        }
    }
}

extension Tunnel {
    /// `tunnel status`.
    typealias Status = RoleCommand<TunnelSide, StatusOptions>
}

/// `home status`: the same for the home machine's `home up`.
typealias HomeStatus = RoleCommand<HomeSide, StatusOptions>
