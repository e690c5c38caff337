import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The bookkeeping both forwards share, without a socket: numbering connections, the cap on
/// how many are open, and the forward's part of `status`.
@Suite("StreamTable: numbering, the connection cap and the status part", .ownThreads)
struct StreamTableTests {
    @Test("numbers connections from 1, caps them with those set up outside it, and fills status")
    func numberingAndStatus() throws {
        let table = StreamTable(emit: { _ in })
        #expect(table.newID() == 1)
        #expect(table.newID() == 2)
        #expect(table.hasRoom())
        #expect(table.hasRoom(besides: StreamTable.maxConnections - 1))
        #expect(!table.hasRoom(besides: StreamTable.maxConnections))
        table.noteFailure("nothing listens on VPS 127.0.0.1:18080")
        var snapshot = StatusSnapshot(
            role: .home, profile: .default, pid: 1, state: .connected, target: try SSHTarget.parse("you@vps"))
        let home = HostPort(host: "127.0.0.1", port: 4096)
        let remote = HostPort(host: "127.0.0.1", port: 18080)
        table.describe(
            into: &snapshot, forward: Forward(direction: .remote, listen: remote, target: home, isOpenCode: true),
            alsoOpen: 3)
        #expect(snapshot.local == home && snapshot.remote == remote && snapshot.alsoLocal.isEmpty)
        #expect(
            snapshot.forwards.map(\.forward.listen) == [remote] && snapshot.forwards.map(\.forward.target) == [home])
        #expect(snapshot.openConnections == 3)
        #expect(snapshot.totalConnections == 2)
        #expect(snapshot.bytesIn == 0 && snapshot.bytesOut == 0)
        #expect(snapshot.lastError == "nothing listens on VPS 127.0.0.1:18080")
    }
}
