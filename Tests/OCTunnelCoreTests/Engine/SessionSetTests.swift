import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The driver's sessions and their roles (`SessionSet`), without a loop.
@Suite("SessionSet: one current session, replaced ones draining", .ownThreads)
struct SessionSetTests {
    static func live(now: Double = 0, keepalive: Double = 15) -> LiveSession {
        let session = MemorySession()
        return LiveSession(
            session: session, idleChannel: session.newChannel(target: nil), scratch: ScratchBuffer(),
            keepaliveInterval: keepalive, highWater: SessionDriver.highWater, now: now)
    }

    @Test("adopting a new session makes it current and the replaced one drains; removing forgets either")
    func adoptAndRemove() {
        var set = SessionSet()
        let first = Self.live(), second = Self.live()
        #expect(set.adopt(first, now: 1) == nil && set.count == 1 && !first.isDraining)
        #expect(set.adopt(second, now: 2) === first)
        #expect(set.current === second && set.draining.map(ObjectIdentifier.init) == [ObjectIdentifier(first)])
        #expect(first.isDraining && first.drainingSince == 2 && set.count == 2)
        #expect(
            !SessionSet.overdue(first, now: 2 + SessionSet.drainLimit - 1)
                && SessionSet.overdue(first, now: 2 + SessionSet.drainLimit))
        #expect(!SessionSet.overdue(second, now: 10_000), "the current session never is")
        set.remove(first)
        #expect(set.count == 1 && set.draining.isEmpty)
        set.remove(second)
        #expect(set.count == 0 && set.current == nil)
    }

    @Test(
        "the current one gone: the newest draining one heard within a keepalive interval takes over; a quiet or failed one does not"
    )
    func restore() {
        var set = SessionSet()
        let old = Self.live(), quiet = Self.live(), current = Self.live()
        _ = set.adopt(old, now: 0)
        _ = set.adopt(quiet, now: 1)
        _ = set.adopt(current, now: 2)
        #expect(set.restoreDrained(now: 3) == nil, "the current one is still there")
        set.remove(current)
        old.keepalive.heard(at: 10)
        #expect(set.restoreDrained(now: 20) === old, "quiet (not heard for 20 s) is passed over")
        #expect(!old.isDraining && set.current === old && set.count == 2)
        set.remove(old)
        quiet.fail(.replaced)
        #expect(set.restoreDrained(now: 20) == nil)
    }
}
