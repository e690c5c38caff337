import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// An offline laptop (no route to the VPS at all: ENETUNREACH, EADDRNOTAVAIL) is not the VPS
/// being down: each attempt fails at once, so the back-at-once schedule (`OutageProbe`) would
/// knock every 0.5 s for nothing. It keeps the backoff, and a network change retries at once.
@Suite("offline: no route keeps the backoff, a network change retries at once", .ownThreads)
struct OfflineRetryTests {
    static func failure(_ code: Int32) -> AnyFailure {
        AnyFailure(Sockets.connectFailure(Errno(rawValue: code), host: "vps", port: 22, timeout: 15).failure)
    }

    @Test("offline: the backoff (1, 2, 4 … 30 s), never the 0.5 s probe; a network change makes the next attempt now")
    func offlineKeepsTheBackoff() throws {
        var state = ReconnectState(exitOnFirstFailure: true, waitsOutPenalty: true)
        _ = state.attemptStarted()
        _ = state.sessionStarted(now: 10)
        let offline = Self.failure(ENETUNREACH)
        var now = 100.0
        var delays: [Double] = []
        for _ in 0..<8 {
            _ = state.attemptStarted()
            guard case .retry(let end, let delay) = state.attemptFailed(offline, sessionUp: false, now: now, random: 0)
            else {
                Issue.record("an attempt with no route at all is probed again at once")
                return
            }
            #expect(end == .attemptFailed(offline))
            #expect(state.retryAt == now + delay)
            delays.append(delay)
            if delays.count < 8 { now += delay }
        }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30], "the backoff: \(delays)")
        #expect(state.outage.since == nil, "no outage run starts while offline")

        // The network comes back 3 s into a 30 s wait: the next attempt is now, whatever the backoff said.
        let changed = now + 3
        #expect(state.retryAt == now + 30)
        state.notice(.networkChange("address 10.0.0.2 added"), since: changed)
        let pending = state.takePending()
        let noticed = try #require(pending)
        let acted = state.actWithoutSession(on: noticed, attemptStartedAt: nil, now: changed)
        let step = try #require(acted)
        #expect(!step.abandonAttempt)
        #expect(state.retryAt == changed)
        let due = state.attemptIsDue(now: changed, connectorRunning: false)
        #expect(due)

        // Online again but the VPS is down (no host there): the back-at-once probe.
        _ = state.attemptStarted()
        let down = state.attemptFailed(Self.failure(EHOSTUNREACH), sessionUp: false, now: changed + 0.1, random: 0)
        #expect(down == .probe(.attemptFailed(Self.failure(EHOSTUNREACH)), delay: 0.5, say: true))
    }

    @Test("which connect failures reached no server: refused, no host, timed out yes; no route at all no")
    func reachedNoServer() {
        #expect(OutageProbe.reachedNoServer(Self.failure(ECONNREFUSED)))
        #expect(OutageProbe.reachedNoServer(Self.failure(EHOSTUNREACH)))
        #expect(OutageProbe.reachedNoServer(Self.failure(ETIMEDOUT)))
        #expect(!OutageProbe.reachedNoServer(Self.failure(ENETUNREACH)))
        #expect(!OutageProbe.reachedNoServer(Self.failure(EADDRNOTAVAIL)))
    }
}
