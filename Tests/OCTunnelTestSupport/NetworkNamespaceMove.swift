import Foundation

/// A second link between the two machines of a `NetworkNamespacePair`, on its own random /30,
/// so the client can move as a laptop does from home Wi-Fi to a hotspot: `move()` deletes the
/// client's address on the first link (the session's address vanishes, no FIN, no RST) and
/// routes the server's address over this link instead. Also the tools to change the client's
/// network without touching the session (`unrelatedChange`) and to make one TCP connection
/// silently dead while new ones get through (`blackholeReplies`), as a NAT that forgot it.
/// Deleted with the pair's namespaces.
public final class NetworkNamespaceMove: @unchecked Sendable {
    public let pair: NetworkNamespacePair
    /// The client's address on the second link, and the server's.
    public let clientAddress: String
    public let serverAddress: String
    public let clientDevice = "oct-c1"
    public let serverDevice = "oct-s1"
    private let ip: String
    private var spare = 0

    /// Adds the link, up and addressed on both ends, carrying nothing until `move()`.
    public init(_ pair: NetworkNamespacePair) throws {
        guard let ip = NetworkNamespacePair.ipTool else {
            throw NetworkNamespacesUnavailable(reason: "iproute2's `ip` is not installed")
        }
        self.ip = ip
        self.pair = pair
        // 10.100-149.b.(4k+1)/30: never the pair's (10.200-250) nor a NetworkNamespaceLink's (10.150-199).
        let a = Int.random(in: 100...149), b = Int.random(in: 0...255), k = Int.random(in: 0...63)
        clientAddress = "10.\(a).\(b).\(4 * k + 1)"
        serverAddress = "10.\(a).\(b).\(4 * k + 2)"
        let client = pair.namespace(.client), server = pair.namespace(.server)
        try Veth.join(
            ip: ip, VethEnd(namespace: client, device: clientDevice, address: clientAddress),
            VethEnd(namespace: server, device: serverDevice, address: serverAddress))
    }

    /// Waits (polling, up to `timeout` s) until no IPv6 address of the client is still
    /// tentative: the pair's links got link-local addresses when they came up, and their
    /// duplicate-address detection ends a second or two later with announcements of its own.
    public func settle(timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let result = try OCTunnelTestSupport.run(
                ip, ["-n", pair.namespace(.client), "-6", "addr", "show", "tentative"])
            guard result.status == 0 else { throw HarnessError("ip -6 addr show tentative: \(result.stderr)") }
            if result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return }
            guard Date() < deadline else {
                throw HarnessError("IPv6 addresses still tentative after \(timeout) s: \(result.stdout)")
            }
            usleep(100_000)
        }
    }

    /// The move: the client's first-link address is deleted (with it the route over that
    /// link), then the server's first-link address (where sshd listens) is routed over this one.
    public func move() throws {
        let client = pair.namespace(.client)
        try run(["-n", client, "addr", "del", pair.clientAddress + "/30", "dev", pair.device(.client)])
        try run(["-n", client, "route", "add", pair.serverAddress + "/32", "via", serverAddress, "dev", clientDevice])
    }

    /// An address added to the client's second link and taken away again, and a route over
    /// that link added and removed: four announcements that concern no session on the first.
    public func unrelatedChange() throws {
        spare += 1
        let client = pair.namespace(.client)
        let parts = serverAddress.split(separator: ".")
        let extra = "10.\(parts[1]).\(parts[2]).\(200 + spare % 50)"
        let route = "198.18.\(spare % 250).0/24"
        try run(["-n", client, "addr", "add", extra + "/32", "dev", clientDevice])
        try run(["-n", client, "route", "add", route, "via", serverAddress, "dev", clientDevice])
        try run(["-n", client, "route", "del", route, "via", serverAddress, "dev", clientDevice])
        try run(["-n", client, "addr", "del", extra + "/32", "dev", clientDevice])
    }

    /// Makes the server's replies to client TCP port `port` vanish (a policy rule on the server
    /// sends them to a blackhole route), so that one connection goes silent while new ones,
    /// from other ports, get through. The client's namespace sees no change at all.
    public func blackholeReplies(toClientPort port: Int) throws {
        let server = pair.namespace(.server)
        try run(["-n", server, "route", "add", "blackhole", pair.clientAddress + "/32", "table", "118"])
        try run(["-n", server, "rule", "add", "dport", String(port), "table", "118"])
    }

    /// The client's local TCP ports with an established connection to `port` on the server's
    /// first-link address (`ss` in the client's namespace).
    public func establishedClientPorts(toServerPort port: Int) throws -> [Int] {
        let ss: String =
            ["/usr/bin/ss", "/bin/ss", "/usr/sbin/ss"].first(where: { (path: String) in access(path, X_OK) == 0 })
            ?? "ss"
        let result = try OCTunnelTestSupport.run(
            ip,
            [
                "netns", "exec", pair.namespace(.client), ss, "-tnH", "state", "established",
                "dst", "\(pair.serverAddress):\(port)",
            ])
        guard result.status == 0 else { throw HarnessError("ss: \(result.stderr)") }
        return result.stdout.split(separator: "\n").compactMap { line in
            // "0 0 10.1.2.1:40000 10.1.2.2:22" (state omitted when filtered)
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let local = fields[fields.count - 2].split(separator: ":").last else { return nil }
            return Int(local)
        }
    }

    private func run(_ arguments: [String]) throws { try Veth.run(ip, arguments) }
}
