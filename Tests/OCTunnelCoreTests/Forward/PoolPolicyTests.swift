@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("the pool's size and pace", .ownThreads)
struct PoolPolicyTests {
    @Test("demand: the largest burst of the last 3 minutes, between 1 and 32")
    func demandFollowsBursts() {
        var demand = PoolDemand()
        #expect(demand.size(now: 1000) == 1)
        demand.record(burst: 6, now: 1000)
        #expect(demand.size(now: 1000) == 6)
        demand.record(burst: 2, now: 1100)
        #expect(demand.size(now: 1100) == 6)
        demand.record(burst: 50, now: 1110)
        #expect(demand.size(now: 1110) == 32)
        // Three minutes after the last big burst, only the small one is remembered.
        demand.record(burst: 2, now: 1320)
        #expect(demand.size(now: 1320) == 2)
        #expect(demand.size(now: 2000) == 1)
    }

    @Test("demand: a browser's six are expected after a session starts, for as long as a burst is remembered")
    func sixAfterSessionStart() {
        var demand = PoolDemand()
        demand.sessionStarted(now: 1000)
        #expect(demand.size(now: 1000) == 6)
        demand.record(burst: 20, now: 1010)
        #expect(demand.size(now: 1010) == 20)
        #expect(demand.size(now: 1300) == 1)
        // A reconnect expects the burst again.
        demand.sessionStarted(now: 1300)
        #expect(demand.size(now: 1300) == 6)
    }

    @Test("backoff: one open per step once failing, steps 1, 2, 4 … 30 s; failures within a step count once")
    func backoffPacesOpens() {
        var backoff = OpenBackoff()
        #expect(backoff.allows(now: 0))
        // A whole pool closed at once: one failure.
        backoff.failed(now: 0)
        backoff.failed(now: 0.01)
        backoff.failed(now: 0.02)
        #expect(!backoff.allows(now: 0.99))
        #expect(backoff.allows(now: 1.0))
        var opens: [Double] = []
        var now = 1.0
        while now < 200 {
            if backoff.allows(now: now) {
                opens.append(now)
                backoff.opened(now: now)
                backoff.failed(now: now)
            }
            now += 0.25
        }
        #expect(Array(opens.prefix(6)) == [1, 3, 7, 15, 31, 61])
        #expect(zip(opens, opens.dropFirst()).allSatisfy { $1 - $0 <= 30.5 })
        backoff.succeeded()
        #expect(backoff.allows(now: now))
    }
}
