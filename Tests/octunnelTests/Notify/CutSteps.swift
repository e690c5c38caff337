import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The steps of the tests of a cut (NotifyCatchUpTests, NotifyCutTests): the VPS taken down, `tunnel reconnect`
/// until the follower's stream is back, and the recorder's file waited for.
enum CutSteps {
    /// The VPS goes down (sshd and its sessions killed); waits until no event stream is left at `backend`.
    static func stopVPS(
        _ fixture: TunnelFixture, _ backend: OpenCodeStandIn, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await offPool { fixture.sshd.stop(hard: true) }
        let gone = try await offPool { waitUntil(timeout: 20) { NotifyTests.emit(backend, StandInEvent.ping) == 0 } }
        try #require(gone, "the follower's stream outlived the VPS", sourceLocation: sourceLocation)
    }

    /// `tunnel reconnect`, then waits for the follower's stream to be back (a peer the stand-in
    /// has not seen among `peers`); the peers seen now, or nil if it did not come back.
    static func reconnect(
        _ fixture: TunnelFixture, _ backend: OpenCodeStandIn, after peers: Set<String>
    ) throws -> Set<String>? {
        let cut = try fixture.run(["tunnel", "reconnect", "--wait", "30"])
        guard cut.status == 0 else { return nil }
        var now = peers
        let back = waitUntil(timeout: 30) {
            now = Set(backend.openStreams().peers)
            return !now.subtracting(peers).isEmpty
        }
        return back ? peers.union(now) : nil
    }

    /// `rounds` reconnects, each until the follower's stream is back; the peers seen by then.
    static func reconnects(
        _ rounds: Int, _ fixture: TunnelFixture, _ backend: OpenCodeStandIn, _ tunnel: RunningProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Set<String> {
        var peers = Set(backend.openStreams().peers)
        for round in 0..<rounds {
            let seen = peers
            peers = try #require(
                try await offPool { try reconnect(fixture, backend, after: seen) },
                "round \(round): the stream did not come back \(tunnel.stderrText)", sourceLocation: sourceLocation)
        }
        return peers
    }

    /// A last request asked unheard ("make last"), then one more reconnect: waits until it is recorded after the
    /// `told` records before it (each catch-up runs in turn on the follower's thread, so a doubled one would have
    /// come before it); its id.
    static func lastRequest(
        _ fixture: TunnelFixture, _ backend: OpenCodeStandIn, _ tunnel: RunningProcess, record: String, after told: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let last = try #require(NotifyCatchUpTests.askUnheard(backend, "make last"), sourceLocation: sourceLocation)
        _ = try await reconnects(1, fixture, backend, tunnel, sourceLocation: sourceLocation)
        try await requireRecords(record, atLeast: told + 1, tunnel, sourceLocation: sourceLocation)
        return last
    }

    /// Waits until the recorder's file `record` holds `count` records or more.
    static func requireRecords(
        _ record: String, atLeast count: Int, timeout: Double = 30, _ tunnel: RunningProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let told = try await offPool {
            waitUntil(timeout: timeout) { NotifyCatchUpTests.records(record).count >= count }
        }
        try #require(
            told, "\(NotifyCatchUpTests.records(record)) \(tunnel.stderrText)", sourceLocation: sourceLocation)
    }
}
