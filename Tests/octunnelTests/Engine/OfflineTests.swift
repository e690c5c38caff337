import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A laptop gone offline (its address on the VPS's link deleted: no route to the VPS at all,
/// every connect fails at once with ENETUNREACH) is not a VPS that is down: `tunnel up` keeps
/// its backoff instead of the back-at-once schedule's attempt every 0.5 s (main made 41
/// attempts in 20 s), and is served again once the address is back. The machines are
/// RoamingTests' (two namespaces, sshd and the OpenCode stand-in on the VPS).
@Suite(
    "offline: no route at all keeps the backoff, served again when the network is back", .ownThreads,
    .timeLimit(.minutes(6)))
struct OfflineTests {
    /// The offline time: the backoff (1, 2, 4, 8 s after a network change) tries about 5 times in it.
    static let offlineSeconds: UInt32 = 12

    @Test(
        "the laptop's address gone for 12 s: at most 8 attempts (every 0.5 s would be 24), served again after it comes back"
    )
    func offline() async throws {
        try await RoamingTests.withLaptopAndVPS("offline") { setup in
            let (net, tunnel) = (setup.net, setup.tunnel)
            let ip = try #require(NetworkNamespacePair.ipTool)
            let address = ["\(net.clientAddress)/30", "dev", net.device(.client)]
            let before = tunnel.stdout.count
            let deleted = try run(ip, ["-n", net.namespace(.client), "addr", "del"] + address)
            try #require(deleted.status == 0, "\(deleted.stderr)")
            // The offline time is the scenario.
            try await offPool { sleep(Self.offlineSeconds) }
            let attempts = tunnel.stdout.dropFirst(before).filter {
                $0.contains("\"stage\"") && $0.contains("\"resolve\"")
            }
            .count
            let unreachable = tunnel.stdout.dropFirst(before).contains { $0.contains("Network is unreachable") }
            FileHandle.standardError.write(
                Data("OfflineTests.offline: \(attempts) attempts in \(Self.offlineSeconds) s without a route\n".utf8))
            #expect(unreachable, "no attempt failed for want of a route: \(tunnel.stdout.suffix(8))")
            #expect(
                attempts >= 2 && attempts <= 8,
                "\(attempts) attempts in \(Self.offlineSeconds) s offline: \(tunnel.stdout.suffix(8))")

            let served = try await setup.servedAfter {
                let added = try run(ip, ["-n", net.namespace(.client), "addr", "add"] + address)
                guard added.status == 0 else { throw HarnessError("ip addr add: \(added.stderr)") }
            }
            FileHandle.standardError.write(
                Data(
                    String(format: "OfflineTests.offline: served again %.2f s after the address came back\n", served)
                        .utf8)
            )
            #expect(
                served <= RoamingTests.servedBound,
                "served again \(served) s after the address came back: \(tunnel.stdout.suffix(8))")
        }
    }
}
