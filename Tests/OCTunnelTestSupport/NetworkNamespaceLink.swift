import Foundation

/// One more machine for a `NetworkNamespacePair`: a fresh namespace joined to one side of the
/// pair by a veth of its own on its own random /30, with a route to that side's address. The
/// laptop beside a VPS, or a home machine back from a reboot with a new address while its old
/// namespace (and the dead session's TCP state in it) stays cut off.
/// `remove()` (or deinit) deletes the namespace, which deletes its veth with it.
public final class NetworkNamespaceLink: @unchecked Sendable {
    public let namespace: String
    /// This machine's address, e.g. 10.171.4.9.
    public let address: String
    /// The far end's address on this link (the pair's side answers on its own address too).
    public let peerAddress: String
    private let ip: String
    private let lock = NSLock()
    private var removed = false

    /// Joins a new namespace to `side` of `pair`, routed to that side's address on the pair's
    /// link, so programs here reach e.g. an sshd listening there. Throws
    /// `NetworkNamespacesUnavailable` when namespaces cannot be made at all.
    public init(to pair: NetworkNamespacePair, side: NetworkNamespacePair.Side) throws {
        guard let ip = NetworkNamespacePair.ipTool else {
            throw NetworkNamespacesUnavailable(reason: "iproute2's `ip` is not installed")
        }
        self.ip = ip
        let tag = String(UInt32.random(in: 0x1000...0xFFFF), radix: 16)
        // Named like the pair's, so NetworkNamespacePair.removeStale finds it after a crash.
        namespace = "\(NetworkNamespacePair.prefix)\(getpid())-\(tag)-l"
        // 10.150-199.b.(4k+1)/30: never the pair's 10.200-250 range.
        let a = Int.random(in: 150...199), b = Int.random(in: 0...255), k = Int.random(in: 0...63)
        address = "10.\(a).\(b).\(4 * k + 1)"
        peerAddress = "10.\(a).\(b).\(4 * k + 2)"
        let here = "oct-l0", there = "oct-p\(tag)"
        let far = pair.namespace(side)
        let reach = side == .client ? pair.clientAddress : pair.serverAddress

        let made = try run(ip, ["netns", "add", namespace])
        guard made.status == 0 else {
            throw NetworkNamespacesUnavailable(
                reason: "`ip netns add` failed: \(made.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        do {
            try ipOrThrow(["-n", namespace, "link", "set", "lo", "up"])
            try Veth.join(
                ip: ip, VethEnd(namespace: namespace, device: here, address: address),
                VethEnd(namespace: far, device: there, address: peerAddress))
            try ipOrThrow(["-n", namespace, "route", "add", reach + "/32", "via", peerAddress, "dev", here])
        } catch {
            remove()
            throw error
        }
    }

    /// The argument vector prefix that runs a program here (`ip netns exec NS`).
    public var exec: [String] { [ip, "netns", "exec", namespace] }

    /// Deletes the namespace (and its veth); idempotent. Stop the processes in it first.
    public func remove() {
        lock.lock()
        defer { lock.unlock() }
        guard !removed else { return }
        removed = true
        _ = try? run(ip, ["netns", "delete", namespace])
    }

    deinit { remove() }

    private func ipOrThrow(_ arguments: [String]) throws { try Veth.run(ip, arguments) }
}
