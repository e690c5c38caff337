import Foundation
import OCTunnelTestSupport

@testable import OCTunnelCore

/// `home up`'s follower started as `home up` starts it, beside an engine that never reaches a VPS (a target nobody
/// answers on, a key file that is not there): what the tests of following OpenCode at home run (HomeFollowingTests,
/// HomePushTests), the engine's events in `lines`.
struct FollowingHome {
    let following: HomeFollowing
    let lines: EngineEventLines

    /// Starts following OpenCode at `home` with `wiring` (its notifier, channels and answerers).
    static func start(home: HostPort, wiring: UpWiring) throws -> FollowingHome {
        let scratch = try TempDirectory()
        let connection = ConnectionSettings(
            target: SSHTarget(user: "me", host: "127.0.0.1", port: freePort()),
            authentication: .keyFile(scratch.file("key")), knownHostsPath: scratch.file("known_hosts"))
        let forward = Forward(
            direction: .remote, listen: HostPort(host: "127.0.0.1", port: freePort()), target: home, isOpenCode: true)
        let lines = EngineEventLines()
        let engine = try Engine(home: HomeForwardOptions(connection: connection, forwards: [forward])) { lines.add($0) }
        let following = HomeFollowing(wiring: wiring, home: home, timeout: 10)
        following.start(passed: nil, engine: engine)
        return FollowingHome(following: following, lines: lines)
    }

    /// Whether the follower says it follows OpenCode's events and then one event stream listens at `backend`
    /// (each waited for).
    func follows(_ backend: OpenCodeStandIn) -> Bool {
        let lines = lines
        return waitUntil(timeout: 30) {
            lines.text.contains { $0.contains("notifications: following OpenCode's events") }
        }
            && waitUntil(timeout: 20) { backend.openStreams().count == 1 }
    }
}
