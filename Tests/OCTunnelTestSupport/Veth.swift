import Foundation

/// One end of a veth: the namespace it sits in, its device name, its IPv4 address on the
/// link's /30, and optionally a fixed MAC address.
struct VethEnd {
    let namespace: String
    let device: String
    let address: String
    var mac: String? = nil
}

/// The `ip` steps every test link shares (`NetworkNamespacePair`, `NetworkNamespaceLink`,
/// `NetworkNamespaceMove`), in one place.
enum Veth {
    /// Adds a veth between `near` (made there) and `far` (its peer moved there), each end
    /// addressed on its /30, and with `up` both ends up. Neither end gets an IPv6 link-local
    /// address: the kernel adds them after duplicate detection (about 2 s after the link comes
    /// up, later under load) and changes them and their routes when a carrier comes and goes,
    /// and each of those is a network change octunnel's watcher reacts to: a `home up` whose
    /// first connection is under way starts again, a cut that must look like silence is seen
    /// as a move (seen: "no answer to a probe within 1.0 s after a network change" instead of
    /// the keepalive, in a loaded full run).
    static func join(ip: String, _ near: VethEnd, _ far: VethEnd, up: Bool = true) throws {
        var add = ["-n", near.namespace, "link", "add", near.device]
        if let mac = near.mac { add += ["address", mac] }
        add += ["type", "veth", "peer", "name", far.device]
        if let mac = far.mac { add += ["address", mac] }
        try run(ip, add + ["netns", far.namespace])
        for end in [near, far] {
            try run(ip, ["-n", end.namespace, "link", "set", end.device, "addrgenmode", "none"])
        }
        for end in [near, far] {
            try run(ip, ["-n", end.namespace, "addr", "add", end.address + "/30", "dev", end.device])
        }
        guard up else { return }
        for end in [near, far] {
            try run(ip, ["-n", end.namespace, "link", "set", end.device, "up"])
        }
    }

    /// Runs `ip ARGUMENTS`; throws `HarnessError` with its stderr when it fails.
    static func run(_ ip: String, _ arguments: [String]) throws {
        let result = try OCTunnelTestSupport.run(ip, arguments)
        guard result.status == 0 else { throw HarnessError("ip \(arguments.joined(separator: " ")): \(result.stderr)") }
    }
}
