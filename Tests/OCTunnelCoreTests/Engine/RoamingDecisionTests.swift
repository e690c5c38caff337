import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The decisions behind roaming, with the clock and the facts given by the test: when a turn
/// means the process slept, when a quick probe proves the session alive or dead, and whether a
/// network change means reconnect now or probe first.
@Suite("Roaming: wake, probe and reconnect decisions", .ownThreads)
struct RoamingDecisionTests {
    // MARK: WakeDetector

    @Test("a poll back by its deadline, or a little late on a busy machine, is no wake")
    func onTime() {
        var wake = WakeDetector()
        #expect(wake.check(now: 100, suspended: 0) == nil)
        wake.expect(wakeBy: 115)
        #expect(wake.check(now: 115.02, suspended: 0) == nil)
        wake.expect(wakeBy: 130)
        #expect(wake.check(now: 101, suspended: 0) == nil, "woken early by a socket")
        wake.expect(wakeBy: 131)
        #expect(wake.check(now: 132.5, suspended: 0) == nil, "1.5 s late is load, not sleep")
        wake.expect(wakeBy: -.infinity)
        #expect(wake.check(now: 133, suspended: 0) == nil, "a turn that was not to sleep at all")
    }

    @Test("a poll back 20 s after its deadline (SIGSTOP, SIGCONT) is a wake, said once")
    func overslept() throws {
        var wake = WakeDetector()
        _ = wake.check(now: 100, suspended: 0)
        wake.expect(wakeBy: 115)
        let woke = wake.check(now: 135, suspended: 0)
        let asleep = try #require(woke)
        #expect(abs(asleep - 20) < 0.001)
        #expect(wake.check(now: 135.1, suspended: 0) == nil)
    }

    @Test("the suspend clock running ahead of the monotonic one (a closed lid) is a wake, even with no deadline")
    func suspended() throws {
        var wake = WakeDetector()
        _ = wake.check(now: 100, suspended: 3)
        wake.expect(wakeBy: .infinity)
        let woke = wake.check(now: 100.5, suspended: 3603)
        let asleep = try #require(woke)
        #expect(abs(asleep - 3600) < 0.001)
        wake.expect(wakeBy: .infinity)
        #expect(wake.check(now: 101, suspended: 3603.2) == nil)
    }

    // MARK: Keepalive.probeNow

    /// A probe whose answer never comes within the call (as over a network).
    static func pending() -> StepResult { .wouldBlock }

    /// A 15 s keepalive last heard from at `heardAt`, asked at 31 s for a quick probe due by 32 s.
    static func probed(heardAt: Double) -> Keepalive {
        var keepalive = Keepalive(interval: 15, now: 0)
        keepalive.heard(at: heardAt)
        keepalive.probeNow(now: 31, deadline: 32)
        return keepalive
    }

    @Test("a quick probe answered (a byte after it was asked) keeps the session and ends the doubt")
    func probeAnswered() {
        var keepalive = Keepalive(interval: 15, now: 30)
        keepalive.probeNow(now: 40, deadline: 41)
        #expect(keepalive.isProbing)
        #expect(keepalive.nextDeadline == 40, "the probe is due now, not at the next interval (45)")
        var sent = 0
        #expect(
            keepalive.check(now: 40) {
                sent += 1; return .wouldBlock
            } == .alive)
        #expect(sent == 1)
        #expect(keepalive.nextDeadline == 41)
        keepalive.heard(at: 40.25)
        #expect(keepalive.check(now: 40.25, send: Self.pending) == .answered(0.25))
        #expect(!keepalive.isProbing)
    }

    @Test("a quick probe unanswered by its deadline is a dead session, long before 3 intervals of silence")
    func probeUnanswered() {
        var keepalive = Self.probed(heardAt: 30)
        #expect(keepalive.check(now: 31, send: Self.pending) == .alive)
        #expect(keepalive.check(now: 31.9, send: Self.pending) == .alive)
        #expect(keepalive.check(now: 32, send: Self.pending) == .unanswered(1))
        #expect(!keepalive.isProbing)
    }

    @Test("bytes heard before the probe was asked (queued while asleep) do not answer it")
    func staleBytes() {
        var keepalive = Self.probed(heardAt: 31)
        #expect(keepalive.check(now: 31, send: Self.pending) == .alive)
        #expect(keepalive.check(now: 32.1, send: Self.pending) == .unanswered(32.1 - 31))
    }

    @Test("without a quick probe, silence is judged as before: dead only after 3 intervals + 1 s")
    func plainKeepalive() {
        var keepalive = Keepalive(interval: 5, now: 0)
        #expect(keepalive.check(now: 5, send: Self.pending) == .alive)
        #expect(keepalive.check(now: 15.9, send: Self.pending) == .alive)
        #expect(keepalive.check(now: 16.5, send: Self.pending) == .silent(16))
        #expect(!keepalive.isQuiet(now: 0))
    }

    @Test("quiet means more than one interval without a byte from the VPS")
    func quiet() {
        var keepalive = Keepalive(interval: 5, now: 0)
        keepalive.heard(at: 10)
        #expect(!keepalive.isQuiet(now: 15))
        #expect(keepalive.isQuiet(now: 15.1))
    }

    // MARK: RoamingDecision

    @Test("the session's address gone: reconnect now, naming the address")
    func addressGone() {
        let decision = RoamingDecision.decide(
            .networkChange("address 10.0.0.1 removed"), localAddress: "10.0.0.1",
            addresses: ["127.0.0.1", "10.9.0.1"], roundTrip: 0.01, now: 50)
        #expect(decision == .reconnect(.addressGone("10.0.0.1")))
        if case .reconnect(let reason) = decision { #expect(reason.text == "the session's address 10.0.0.1 is gone") }
        let mapped = RoamingDecision.decide(
            .wake(20), localAddress: "::ffff:10.0.0.1", addresses: ["10.9.0.1"], roundTrip: nil, now: 50)
        #expect(mapped == .reconnect(.addressGone("10.0.0.1")))
    }

    @Test(
        "a network change moved the route to the VPS to another address, the session's still here: reconnect, the old path working"
    )
    func routeMoved() {
        let moved = RoamingDecision.decide(
            .networkChange("route added"), localAddress: "10.0.0.1", addresses: ["10.0.0.1", "10.9.0.1"],
            preferredSource: "10.9.0.1", roundTrip: 0.04, now: 50)
        #expect(moved == .reconnect(.routeMoved(from: "10.0.0.1", to: "10.9.0.1")))
        if case .reconnect(let reason) = moved {
            #expect(reason.oldPathWorks)
            #expect(reason.text == "the route to the VPS now leaves from 10.9.0.1, not the session's 10.0.0.1")
        }
        #expect(!ReconnectReason.addressGone("10.0.0.1").oldPathWorks)
        // The same source (mapped or not), or a wake (the route says nothing of the session's life): probe.
        let same = RoamingDecision.decide(
            .networkChange("route added"), localAddress: "::ffff:10.0.0.1", addresses: ["10.0.0.1"],
            preferredSource: "10.0.0.1", roundTrip: 0.04, now: 50)
        #expect(same == .probe(deadline: 51))
        let woke = RoamingDecision.decide(
            .wake(30), localAddress: "10.0.0.1", addresses: ["10.0.0.1", "10.9.0.1"],
            preferredSource: "10.9.0.1", roundTrip: 0.04, now: 50)
        #expect(woke == .probe(deadline: 51))
    }

    @Test("the session's address still here (or unknown): probe, allowing 4 round trips and at least 1 s")
    func addressKept() {
        let here = RoamingDecision.decide(
            .networkChange("routes changed"), localAddress: "10.0.0.1",
            addresses: ["10.0.0.1", "10.9.0.1"], roundTrip: 0.04, now: 50)
        #expect(here == .probe(deadline: 51))
        let far = RoamingDecision.decide(
            .wake(30), localAddress: "10.0.0.1", addresses: ["10.0.0.1"], roundTrip: 0.6, now: 50)
        #expect(far == .probe(deadline: 52.4))
        let unknown = RoamingDecision.decide(
            .clientAfterSilence(20), localAddress: "10.0.0.1", addresses: nil, roundTrip: nil, now: 50)
        #expect(unknown == .probe(deadline: 51))
    }

    @Test("a reconnect request reconnects whatever the addresses say")
    func requested() {
        let decision = RoamingDecision.decide(
            .requested, localAddress: "10.0.0.1", addresses: ["10.0.0.1"], roundTrip: 0.01, now: 50)
        #expect(decision == .reconnect(.requested))
        #expect(ReconnectReason.requested.text == "reconnect requested")
    }

    @Test("after a network change the backoff starts over: the next delay is the first one")
    func backoffStartsOver() {
        var policy = ReconnectPolicy()
        for _ in 0..<5 { _ = policy.nextDelay(afterUptime: 1, random: 0) }
        #expect(policy.nextDelay(afterUptime: 1, random: 0) == 30)
        policy.networkChanged()
        #expect(policy.nextDelay(afterUptime: 1, random: 0) == 1)
    }

    // MARK: What the kernel says, and what the user reads

    @Test("an rtnetlink RTM_DELADDR for 10.1.2.3 and an RTM_NEWROUTE read as an address removed and routes changed")
    func netlinkMessages() {
        // nlmsghdr (16) + ifaddrmsg (8) + IFA_ADDRESS (8) + IFA_LOCAL (8) = 40 bytes.
        var deladdr: [UInt8] = [40, 0, 0, 0, 21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        deladdr += [UInt8(AF_INET), 30, 0, 0, 2, 0, 0, 0]
        deladdr += [8, 0, 1, 0, 10, 1, 2, 4]
        deladdr += [8, 0, 2, 0, 10, 1, 2, 3]
        // nlmsghdr + rtmsg (12 bytes), no attributes.
        let newroute: [UInt8] = [28, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 12)
        let changes = RoutingSocket.parseNetlink(deladdr + newroute)
        #expect(changes == [.addressRemoved("10.1.2.3"), .routeChanged])
        #expect(NetworkWatcher.summary(changes + changes) == "address 10.1.2.3 removed, routes changed")
    }

    @Test(
        "a burst of announcements settles 250 ms after the last (1 s at most), 30 ms once it removed the session's own address"
    )
    func burstSettles() throws {
        var burst = NetworkWatcher.Burst()
        var asked = 0
        let own: () -> String? = {
            asked += 1
            return "::ffff:10.1.2.3"
        }
        burst.add([.routeChanged, .addressAdded("10.9.0.1")], now: 10, ownAddress: own)
        #expect(asked == 0, "the session's address is asked only when an address is removed")
        burst.add([.addressRemoved("10.7.0.1")], now: 10.1, ownAddress: own)
        #expect(abs((burst.settlesAt ?? 0) - 10.35) < 1e-9 && !burst.removedOwn, "another address: the usual quiet")
        let early = burst.take(now: 10.34)
        #expect(early == nil)
        for now in stride(from: 10.2, to: 11.5, by: 0.2) { burst.add([.linkChanged], now: now, ownAddress: own) }
        #expect(burst.settlesAt == 11, "a flapping link: 1 s after the first at most")
        let flapped = burst.take(now: 11)
        let settled = try #require(flapped)
        #expect(settled.since == 10 && settled.changes.count == 10)
        #expect(burst.settlesAt == nil)

        burst.add([.addressRemoved("10.1.2.3")], now: 20, ownAddress: own)
        #expect(burst.removedOwn)
        burst.add([.addressAdded("10.9.0.1"), .routeChanged], now: 20.005, ownAddress: own)
        let landing = burst.take(now: 20.03)
        #expect(landing == nil, "the rest of the move lands first")
        let moved = burst.take(now: 20.04)
        let move = try #require(moved)
        #expect(move.since == 20 && move.changes.count == 3)
        #expect(!burst.removedOwn)
        burst.add([.addressRemoved("10.1.2.3")], now: 30, ownAddress: { nil })
        #expect(abs((burst.settlesAt ?? 0) - 30.25) < 1e-9, "no session, an attempt running: the usual quiet")
        burst.nothingToKeep = true
        #expect(abs((burst.settlesAt ?? 0) - 30.03) < 1e-9, "no session, no attempt: only a retry's wait to cut short")
    }

    @Test("roaming events read as the issue says and serialize as JSON")
    func events() throws {
        let cause = RoamingCause.networkChange("address 10.1.2.3 removed")
        #expect(
            RoamingEvent.probing(cause, deadline: 1).text
                == "network changed (address 10.1.2.3 removed): probing the session (answer within 1.0 s)")
        #expect(RoamingEvent.reconnected(cause, after: 0.94).text == "reconnected 0.9 s after a network change")
        #expect(
            RoamingEvent.kept(.wake(20), answeredIn: 0.02).text
                == "the session answered in 0.0 s after a wake from sleep: kept")
        // Each event's JSON, value by value: the event, the session's state, the cause, the line
        // a person reads, and what the cause and the event carry.
        let expected: [(RoamingEvent, [String: Any])] = [
            (
                .probing(cause, deadline: 1.23456),
                [
                    "event": "probing", "status": "connected", "cause": "networkChange",
                    "detail": "address 10.1.2.3 removed", "deadline": 1.235,
                ]
            ),
            (
                .reconnectingNow(.requested, reason: "reconnect requested"),
                [
                    "event": "reconnectingNow", "status": "connecting", "cause": "requested",
                    "reason": "reconnect requested",
                ]
            ),
            (
                .kept(.clientAfterSilence(20), answeredIn: 0.1),
                [
                    "event": "probeAnswered", "status": "connected", "cause": "clientAfterSilence",
                    "quietSeconds": 20.0, "seconds": 0.1,
                ]
            ),
            (
                .reconnected(.wake(3), after: 0.5),
                ["event": "reconnected", "status": "connected", "cause": "wake", "quietSeconds": 3.0, "seconds": 0.5]
            ),
        ]
        for (event, values) in expected {
            let line = jsonLine(EngineEvent.roaming(event).jsonObject)
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(object["message"] as? String == event.text, "\(line)")
            #expect(Set(object.keys) == Set(values.keys).union(["message"]), "\(line)")
            for (key, value) in values {
                if let text = value as? String { #expect(object[key] as? String == text, "\(key) in \(line)") }
                if let number = value as? Double { #expect(object[key] as? Double == number, "\(key) in \(line)") }
            }
        }
    }
}
