import Foundation

/// Why network namespaces cannot be made here (not root, no CAP_NET_ADMIN, no iproute2):
/// a test that needs them is skipped with this reason, not failed.
public struct NetworkNamespacesUnavailable: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

/// Two fresh network namespaces joined by a veth pair on a random private /30: a "client" and
/// a "server" machine with a real link between them that a test can cut, restore or slow down.
/// The test process itself stays in its own namespace; children enter one through `exec(_:)`.
/// `remove()` (or deinit) deletes both namespaces, which deletes the veth with them.
public final class NetworkNamespacePair: @unchecked Sendable {
    public enum Side: Sendable { case client, server }

    public let clientNamespace: String
    public let serverNamespace: String
    /// The client end's address on the /30, e.g. 10.231.17.5.
    public let clientAddress: String
    /// The server end's address on the /30, e.g. 10.231.17.6.
    public let serverAddress: String
    public let clientDevice = "oct-c0"
    public let serverDevice = "oct-s0"
    /// Locally administered MACs, fixed: the two ends are alone on their link.
    private let clientMAC = "02:6f:63:74:00:01"
    private let serverMAC = "02:6f:63:74:00:02"
    private let ip: String
    private let lock = NSLock()
    private var removed = false

    /// Prefix of every namespace this type names: `oct-<pid>-<random>-c|s`.
    static let prefix = "oct-"

    /// iproute2's `ip`, wherever this distribution puts it.
    public static let ipTool: String? = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
        access($0, X_OK) == 0
    }

    /// Creates both namespaces, the veth between them and their addresses. Throws
    /// `NetworkNamespacesUnavailable` when this machine cannot make namespaces at all; any later
    /// failure removes what was made and throws `HarnessError`.
    public init() throws {
        guard let ip = Self.ipTool else {
            throw NetworkNamespacesUnavailable(reason: "iproute2's `ip` is not installed")
        }
        guard geteuid() == 0 else {
            throw NetworkNamespacesUnavailable(reason: "not root: `ip netns add` needs CAP_SYS_ADMIN and CAP_NET_ADMIN")
        }
        self.ip = ip
        Self.removeStale(ip: ip)
        let suffix = String(UInt32.random(in: 0...0xFFFFFF), radix: 16)
        let base = "\(Self.prefix)\(getpid())-\(suffix)"
        clientNamespace = base + "-c"
        serverNamespace = base + "-s"
        // 10.a.b.(4k+1)/30 and 10.a.b.(4k+2)/30; only ever used inside these two namespaces.
        let a = Int.random(in: 200...250), b = Int.random(in: 0...255), k = Int.random(in: 0...63)
        clientAddress = "10.\(a).\(b).\(4 * k + 1)"
        serverAddress = "10.\(a).\(b).\(4 * k + 2)"

        let made = try run(ip, ["netns", "add", clientNamespace])
        guard made.status == 0 else {
            throw NetworkNamespacesUnavailable(
                reason: "`ip netns add` failed: \(made.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        do {
            try ipOrThrow(["netns", "add", serverNamespace])
            try ipOrThrow(["-n", clientNamespace, "link", "set", "lo", "up"])
            try ipOrThrow(["-n", serverNamespace, "link", "set", "lo", "up"])
            // Joined down: the fixed neighbour entries come first (Veth.join says why no IPv6).
            try Veth.join(
                ip: ip,
                VethEnd(namespace: clientNamespace, device: clientDevice, address: clientAddress, mac: clientMAC),
                VethEnd(namespace: serverNamespace, device: serverDevice, address: serverAddress, mac: serverMAC),
                up: false)
            // Each end knows the other's MAC for good, as a client keeps reaching its home router
            // when the path beyond it dies: during a cut, packets vanish silently (connects hang
            // until their timeout) instead of failing fast on an ARP miss ("no route to host").
            try ipOrThrow([
                "-n", clientNamespace, "neigh", "replace", serverAddress, "lladdr", serverMAC, "dev", clientDevice,
                "nud", "permanent",
            ])
            try ipOrThrow([
                "-n", serverNamespace, "neigh", "replace", clientAddress, "lladdr", clientMAC, "dev", serverDevice,
                "nud", "permanent",
            ])
            try setLink(.client, up: true)
            try setLink(.server, up: true)
        } catch {
            remove()
            throw error
        }
    }

    public func namespace(_ side: Side) -> String { side == .client ? clientNamespace : serverNamespace }
    public func device(_ side: Side) -> String { side == .client ? clientDevice : serverDevice }

    /// The argument vector prefix that runs a program inside one namespace (`ip netns exec NS`);
    /// `ip` execs the program, so the spawned pid is the program's own.
    public func exec(_ side: Side) -> [String] { [ip, "netns", "exec", namespace(side)] }

    /// Takes one end of the veth down (the link is cut both ways; the other end keeps its
    /// address, route and neighbour entry, only its carrier goes) or brings it back up.
    public func setLink(_ side: Side, up: Bool) throws {
        try ipOrThrow(["-n", namespace(side), "link", "set", device(side), up ? "up" : "down"])
        if up {
            // Taking a device down flushes even its permanent neighbour entries.
            let (address, mac) = side == .client ? (serverAddress, serverMAC) : (clientAddress, clientMAC)
            try ipOrThrow([
                "-n", namespace(side), "neigh", "replace", address, "lladdr", mac, "dev", device(side), "nud",
                "permanent",
            ])
        }
    }

    /// Delays every packet leaving `side`'s end by `milliseconds` (tc netem); on both ends the
    /// round trip grows by twice that. Throws when the kernel has no netem.
    public func addDelay(_ side: Side, milliseconds: Int) throws {
        let tc = (ip as NSString).deletingLastPathComponent + "/tc"
        let result = try run(
            ip,
            [
                "netns", "exec", namespace(side), tc, "qdisc", "add", "dev", device(side), "root", "netem", "delay",
                "\(milliseconds)ms",
            ])
        guard result.status == 0 else { throw HarnessError("tc netem on \(namespace(side)): \(result.stderr)") }
    }

    /// Deletes both namespaces (and with them the veth); idempotent. Stop the processes running
    /// inside first: a namespace lives on, nameless, while a process is still in it.
    public func remove() {
        lock.lock()
        defer { lock.unlock() }
        guard !removed else { return }
        removed = true
        for name in [clientNamespace, serverNamespace] { _ = try? run(ip, ["netns", "delete", name]) }
    }

    deinit { remove() }

    private func ipOrThrow(_ arguments: [String]) throws { try Veth.run(ip, arguments) }

    /// Deletes namespaces left by test processes that died before their cleanup ran
    /// (`oct-<pid>-…` whose pid no longer exists).
    static func removeStale(ip: String) {
        guard let listed = try? run(ip, ["netns", "list"]), listed.status == 0 else { return }
        for line in listed.stdout.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix(prefix),
                let pid = Int32(name.dropFirst(prefix.count).split(separator: "-").first ?? ""),
                pid != getpid(), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            _ = try? run(ip, ["netns", "delete", name])
        }
    }
}
