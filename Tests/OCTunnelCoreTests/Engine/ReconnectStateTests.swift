import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The session driver's retry and roaming state, walked through each cause with the test's
/// clock: when the next attempt starts, what a cause leads to with and without a session, and
/// what each step says.
@Suite("ReconnectState: the next attempt and the roaming under way, per cause", .ownThreads)
struct ReconnectStateTests {
    static let penalty = AnyFailure(ConnectError.closedBeforeGreeting(host: "vps", port: 22))
    static let refused = AnyFailure(ConnectError.connectionRefused(host: "vps", port: 22))
    static let hostKey = AnyFailure(
        TrustError.hostKeyChanged(host: "vps", port: 22, known: ["SHA256:a"], presented: "SHA256:b", file: "kh"))

    /// A state with one session up since `now`.
    static func connected(at now: Double = 10, exitOnFirstFailure: Bool = true) -> ReconnectState {
        var state = ReconnectState(exitOnFirstFailure: exitOnFirstFailure, waitsOutPenalty: true)
        _ = state.attemptStarted()
        #expect(state.sessionStarted(now: now)?.text == nil)
        return state
    }

    /// Acts on the pending cause as the driver does with a live session.
    static func act(
        _ state: inout ReconnectState, decision: RoamingDecision, overlap: Bool = true,
        replacementStartedAt: Double? = nil, now: Double
    )
        -> (step: ReconnectState.Step, event: RoamingEvent, abandonAttempt: Bool)?
    {
        guard
            let noticed = state.causeToActOn(
                clientsArrived: false, quietFor: nil, replacementStartedAt: replacementStartedAt, now: now)
        else { return nil }
        return state.act(on: noticed, decision: decision, allowsOverlap: overlap, now: now)
    }

    @Test("silence (keepalive): the backoff doubles from 1 s, and starts over after a minute of uptime")
    func silence() {
        var state = Self.connected()
        let end = SessionEnd.silence(seconds: 46)
        #expect(state.retry(after: end, uptime: 5, now: 100, random: 0) == 1)
        #expect(state.retryAt == 101)
        let early = state.attemptIsDue(now: 100.9, connectorRunning: false)
        let running = state.attemptIsDue(now: 101, connectorRunning: true)
        let due = state.attemptIsDue(now: 101, connectorRunning: false)
        #expect(!early)
        #expect(!running, "an attempt already runs")
        #expect(due)
        #expect(state.retryAt == nil)
        #expect(state.retry(after: end, uptime: 5, now: 200, random: 0) == 2)
        #expect(state.retry(after: end, uptime: 5, now: 300, random: 0) == 4)
        #expect(
            state.retry(after: end, uptime: 60, now: 400, random: 0) == 1,
            "a session up a minute starts the backoff over")
    }

    @Test("send failure and a VPS that closed: the backoff, not at once")
    func sendFailedAndClosed() {
        var state = Self.connected()
        #expect(state.retry(after: .sendFailed("Broken pipe"), uptime: 1, now: 50, random: 0) == 1)
        #expect(state.retry(after: .vpsClosed(code: -13, message: ""), uptime: 1, now: 60, random: 0) == 2)
        #expect(state.retryAt == 62)
    }

    @Test("the route moved, the old path working: make before break where forwards overlap, a drop where not")
    func networkChangeRouteMoved() throws {
        let cause = RoamingCause.networkChange("route added")
        let reason = ReconnectReason.routeMoved(from: "10.0.0.1", to: "10.9.0.1")
        var state = Self.connected()
        state.notice(cause, since: 49.5)
        let acted = try #require(Self.act(&state, decision: .reconnect(reason), now: 50))
        #expect(acted.step == .replace)
        #expect(state.replacing)
        var home = Self.connected()
        home.notice(cause, since: 49.5)
        let dropped = try #require(Self.act(&home, decision: .reconnect(reason), overlap: false, now: 50))
        #expect(dropped.step == .drop(.roamed(cause, reason), sayGoodbye: false))
    }

    @Test("network change, the session's address gone: dropped at once, the next attempt now, then reconnected")
    func networkChangeAddressGone() throws {
        var state = Self.connected()
        for now in [20.0, 30, 40] { _ = state.retry(after: .silence(seconds: 46), uptime: 1, now: now, random: 0) }
        _ = state.sessionStarted(now: 45)
        let cause = RoamingCause.networkChange("address 10.0.0.1 removed")
        state.notice(cause, since: 49.5)
        #expect(state.pending == ReconnectState.Noticed(cause: cause, since: 49.5))
        let result = Self.act(&state, decision: .reconnect(.addressGone("10.0.0.1")), now: 50)
        let acted = try #require(result)
        let end = SessionEnd.roamed(cause, .addressGone("10.0.0.1"))
        #expect(acted.step == .drop(end, sayGoodbye: false))
        #expect(
            acted.event.text
                == "network changed (address 10.0.0.1 removed): the session's address 10.0.0.1 is gone; reconnecting now"
        )
        #expect(end.text == "network changed (address 10.0.0.1 removed): the session's address 10.0.0.1 is gone")
        #expect(state.pending == nil)
        #expect(state.retry(after: end, uptime: 5, now: 50, random: 0) == 0)
        let due = state.attemptIsDue(now: 50, connectorRunning: false)
        #expect(due)
        let started = state.sessionStarted(now: 50.6)
        let reconnected = try #require(started)
        #expect(reconnected.text == "reconnected 1.1 s after a network change", "counted from the first announcement")
        #expect(state.roaming == nil)
        #expect(
            state.retry(after: .silence(seconds: 46), uptime: 1, now: 60, random: 0) == 1, "the backoff started over")
    }

    @Test("network change, the address still here: a probe; answered, the session stays")
    func networkChangeProbeAnswered() throws {
        var state = Self.connected()
        let cause = RoamingCause.networkChange("routes changed")
        state.notice(cause, since: 50)
        let result = Self.act(&state, decision: .probe(deadline: 51.5), now: 50.2)
        let acted = try #require(result)
        #expect(acted.step == .probe(deadline: 51.5))
        #expect(acted.event.text == "network changed (routes changed): probing the session (answer within 1.3 s)")
        #expect(state.roaming == ReconnectState.Noticed(cause: cause, since: 50))
        #expect(state.probeAnswered(in: 0.04)?.text == "the session answered in 0.0 s after a network change: kept")
        #expect(state.roaming == nil)
        #expect(state.probeAnswered(in: 0.04)?.text == nil, "a keepalive answer outside roaming says nothing")
    }

    @Test("wake: a probe unanswered ends the session at once, naming the wake")
    func wakeProbeUnanswered() throws {
        var state = Self.connected()
        state.notice(.wake(20), since: 70)
        let result = Self.act(&state, decision: .probe(deadline: 71), now: 70)
        let acted = try #require(result)
        #expect(acted.event.text == "woke after 20.0 s asleep: probing the session (answer within 1.0 s)")
        let end = state.probeUnanswered(after: 1.0)
        #expect(end == .unansweredProbe(seconds: 1.0, after: .wake(20)))
        #expect(end.text == "no answer to a probe within 1.0 s after a wake from sleep")
        #expect(state.retry(after: end, uptime: 60, now: 71, random: 0) == 0)
        #expect(state.retryAt == 71)
        #expect(state.sessionStarted(now: 71.5)?.text == "reconnected 1.5 s after a wake from sleep")
    }

    @Test("a probe unanswered with no cause recorded is said as after a network change")
    func unansweredWithoutCause() {
        var state = Self.connected()
        #expect(state.probeUnanswered(after: 2).text == "no answer to a probe within 2.0 s after a network change")
    }

    @Test("a client after a silence: the cause only when clients came and the session was quiet")
    func clientAfterSilence() throws {
        var state = Self.connected()
        #expect(
            state.causeToActOn(clientsArrived: true, quietFor: nil, replacementStartedAt: nil, now: 80) == nil,
            "not quiet, or a probe under way")
        #expect(
            state.causeToActOn(clientsArrived: false, quietFor: 20, replacementStartedAt: nil, now: 80) == nil,
            "quiet, but nobody came")
        let arrived = state.causeToActOn(clientsArrived: true, quietFor: 20, replacementStartedAt: nil, now: 80)
        let noticed = try #require(arrived)
        #expect(noticed == ReconnectState.Noticed(cause: .clientAfterSilence(20), since: 80))
        let acted = state.act(on: noticed, decision: .probe(deadline: 81), allowsOverlap: true, now: 80)
        #expect(
            acted.event.text
                == "a client came after 20.0 s without a word from the VPS: probing the session (answer within 1.0 s)")
        state.notice(.wake(5), since: 80.5)
        #expect(
            state.causeToActOn(clientsArrived: true, quietFor: 20, replacementStartedAt: nil, now: 81)?.cause
                == .wake(5),
            "a noticed cause goes first")
    }

    @Test("requested, tunnel up: a new session beside the live one; it replaces it, or the live one stays")
    func requestedMakeBeforeBreak() throws {
        var state = Self.connected()
        state.notice(.requested, since: 90)
        let result = Self.act(&state, decision: .reconnect(.requested), overlap: true, now: 90)
        let acted = try #require(result)
        #expect(acted.step == .replace)
        #expect(acted.event.text == "reconnect requested: reconnecting now")
        #expect(state.replacing)
        state.notice(.networkChange("routes changed"), since: 90.1)
        #expect(
            state.causeToActOn(clientsArrived: false, quietFor: nil, replacementStartedAt: 90.15, now: 90.2) == nil,
            "a change before the replacement's attempt began: nothing else while it connects")
        state.notice(.requested, since: 90.3)
        #expect(
            state.causeToActOn(clientsArrived: true, quietFor: 20, replacementStartedAt: 90.15, now: 90.4) == nil,
            "nor a second request or a client after a silence")
        #expect(state.pending == nil)
        #expect(state.probeAnswered(in: 0.1)?.text == nil)
        #expect(state.sessionStarted(now: 90.8)?.text == "reconnected 0.8 s after a reconnect request")
        #expect(!state.replacing)

        state.notice(.requested, since: 100)
        _ = Self.act(&state, decision: .reconnect(.requested), overlap: true, now: 100)
        #expect(state.attemptFailed(Self.refused, sessionUp: true, now: 101) == .keepCurrent(.requested))
        #expect(!state.replacing && state.roaming == nil && state.retryAt == nil)

        // A moved route's replacement that fails is said by its own reason, not as a request.
        state.notice(.networkChange("routes changed"), since: 110)
        let moved = ReconnectReason.routeMoved(from: "10.0.0.1", to: "10.0.0.2")
        _ = Self.act(&state, decision: .reconnect(moved), overlap: true, now: 110)
        #expect(state.attemptFailed(Self.refused, sessionUp: true, now: 111) == .keepCurrent(moved))
    }

    @Test(
        "a move while a replacement connects: the attempt begun before is abandoned, the live session decided on as usual"
    )
    func moveDuringReplacement() throws {
        let cause = RoamingCause.networkChange("address 10.0.0.1 removed")
        // The live session's address is gone: dropped now, the replacement's reason with it; the next attempt at once.
        var gone = Self.connected()
        gone.notice(.requested, since: 90)
        let replacing = Self.act(&gone, decision: .reconnect(.requested), now: 90)
        #expect(replacing?.step == .replace)
        gone.notice(cause, since: 90.4)
        let acted = Self.act(
            &gone, decision: .reconnect(.addressGone("10.0.0.1")), replacementStartedAt: 90, now: 90.45)
        let dropped = try #require(acted)
        let end = SessionEnd.roamed(cause, .addressGone("10.0.0.1"))
        #expect(dropped.step == .drop(end, sayGoodbye: false))
        #expect(dropped.abandonAttempt)
        #expect(!gone.replacing)
        #expect(gone.retry(after: end, uptime: 80, now: 90.45, random: 0) == 0)
        #expect(gone.sessionStarted(now: 90.6)?.text == "reconnected 0.2 s after a network change")

        // The live session's address is still there: it is probed, and the replacement starts again.
        var kept = Self.connected()
        kept.notice(.requested, since: 100)
        _ = Self.act(&kept, decision: .reconnect(.requested), now: 100)
        kept.notice(.wake(12), since: 100.5)
        let probing = Self.act(&kept, decision: .probe(deadline: 101.5), replacementStartedAt: 100, now: 100.5)
        let probed = try #require(probing)
        #expect(probed.step == .probe(deadline: 101.5) && probed.abandonAttempt)
        #expect(kept.replacing, "the request still wants its new session")
        #expect(kept.attemptFailed(Self.refused, sessionUp: true, now: 101) == .keepCurrent(.requested))

        // The route moved: a new replacement, for that reason.
        var moved = Self.connected()
        moved.notice(.requested, since: 110)
        _ = Self.act(&moved, decision: .reconnect(.requested), now: 110)
        moved.notice(.networkChange("routes changed"), since: 110.2)
        let route = ReconnectReason.routeMoved(from: "10.0.0.1", to: "10.9.0.1")
        let again = Self.act(&moved, decision: .reconnect(route), replacementStartedAt: 110, now: 110.3)
        let replaced = try #require(again)
        #expect(replaced.step == .replace && replaced.abandonAttempt)
        #expect(moved.attemptFailed(Self.refused, sessionUp: true, now: 111) == .keepCurrent(route))
    }

    @Test("requested, home up: the session says goodbye and goes, the next attempt at once")
    func requestedBreakFirst() throws {
        var state = Self.connected()
        state.notice(.networkChange("routes changed"), since: 110)
        state.notice(.requested, since: 110.1)
        state.notice(.networkChange("address 10.0.0.2 added"), since: 110.2)
        #expect(state.pending?.cause == .requested, "a network change does not replace a pending request")
        let result = Self.act(&state, decision: .reconnect(.requested), overlap: false, now: 110.3)
        let acted = try #require(result)
        let end = SessionEnd.roamed(.requested, .requested)
        #expect(acted.step == .drop(end, sayGoodbye: true))
        #expect(end.text == "reconnect requested: reconnect requested")
        #expect(state.retry(after: end, uptime: 100, now: 110.3, random: 0) == 0)
        state.notice(.wake(4), since: 110.4)
        #expect(state.pending?.cause == .wake(4), "a wake does")
    }

    @Test("roaming without a session: the backoff is cut short, an attempt begun before is abandoned")
    func withoutSession() throws {
        var state = Self.connected()
        let cause = RoamingCause.networkChange("address 10.0.0.3 added")
        #expect(state.retry(after: .silence(seconds: 46), uptime: 1, now: 120, random: 0) == 1)
        let cutShort = state.actWithoutSession(on: .init(cause: cause, since: 120.5), attemptStartedAt: nil, now: 120.5)
        let cut = try #require(cutShort)
        #expect(!cut.abandonAttempt)
        #expect(
            cut.event.text == "network changed (address 10.0.0.3 added): no session; attempting now; reconnecting now")
        #expect(state.retryAt == 120.5)
        #expect(
            state.actWithoutSession(on: .init(cause: cause, since: 120.6), attemptStartedAt: nil, now: 120.6)?
                .abandonAttempt == nil,
            "the attempt is due already")
        let due = state.attemptIsDue(now: 120.6, connectorRunning: false)
        #expect(due)
        #expect(
            state.actWithoutSession(on: .init(cause: cause, since: 120.7), attemptStartedAt: 120.8, now: 121)?
                .abandonAttempt == nil,
            "the attempt under way began after the change")
        let abandoned = state.actWithoutSession(on: .init(cause: cause, since: 121), attemptStartedAt: 120.6, now: 121)
        let abandon = try #require(abandoned)
        #expect(abandon.abandonAttempt)
        #expect(
            abandon.event.text.hasSuffix(
                "no session; the attempt under way began before, a new one starts now; reconnecting now"))
        #expect(state.retryAt == 121)
        #expect(
            state.actWithoutSession(on: .init(cause: .requested, since: 121), attemptStartedAt: 121.5, now: 122)?
                .abandonAttempt == true,
            "a request abandons even a newer attempt")
        #expect(
            state.sessionStarted(now: 122.5)?.text == "reconnected 2.0 s after a network change", "from the first cause"
        )
    }

    @Test(
        "attempt failures: the first ends the run, one retrying cannot fix always does, a penalty is waited out and named once"
    )
    func attemptFailures() {
        var first = ReconnectState(exitOnFirstFailure: true, waitsOutPenalty: true)
        #expect(first.attemptFailed(Self.refused, sessionUp: false, now: 1) == .giveUp)
        #expect(
            first.attemptFailed(Self.penalty, sessionUp: false, now: 1, random: 0)
                == .retry(.attemptFailed(Self.penalty), delay: 1))
        #expect(
            first.attemptFailed(Self.penalty, sessionUp: false, now: 2, random: 0)
                == .retry(.stillClosedBeforeGreeting, delay: 2))
        #expect(SessionEnd.stillClosedBeforeGreeting.text == "still closed before its SSH greeting (see above)")
        var check = ReconnectState(exitOnFirstFailure: true, waitsOutPenalty: false)
        #expect(
            check.attemptFailed(Self.penalty, sessionUp: false, now: 1) == .giveUp, "tunnel check reports a penalty")

        var state = Self.connected()
        #expect(
            state.attemptFailed(Self.refused, sessionUp: false, now: 3, random: 0)
                == .probe(.attemptFailed(Self.refused), delay: 0.5, say: true))
        #expect(SessionEnd.attemptFailed(Self.refused).text == Self.refused.localizedDescription)
        #expect(state.attemptFailed(Self.hostKey, sessionUp: false, now: 4) == .giveUp)
        _ = state.attemptFailed(Self.penalty, sessionUp: false, now: 5, random: 0)
        _ = state.sessionStarted(now: 6)
        #expect(
            state.attemptFailed(Self.penalty, sessionUp: false, now: 7, random: 0)
                == .retry(.attemptFailed(Self.penalty), delay: 2),
            "named in full again after a session (the backoff goes on: that session was up under a minute; the refusal left it alone)"
        )
        #expect(state.attemptStarted() == 2)
    }

    @Test(
        "a VPS that answers no connection: tried every 0.5 s, then 1 s, then 2 s, said every 10 s, whatever the backoff had reached"
    )
    func outageProbes() {
        var state = Self.connected()
        // Three sessions lost in a row: the backoff is at 4 s.
        for now in [20.0, 30, 40] { _ = state.retry(after: .silence(seconds: 46), uptime: 1, now: now, random: 0) }
        var now = 100.0
        var said: [Double] = []
        var delays: [Double: Double] = [:]
        while now < 500 {
            #expect(state.attemptIsQuiet(now: now) == (now > 100 && !said.isEmpty && now - said.last! < 10))
            _ = state.attemptStarted()
            guard
                case .probe(let end, let delay, let say) = state.attemptFailed(
                    Self.refused, sessionUp: false, now: now, random: 0)
            else {
                Issue.record("a refused attempt is not probed again")
                return
            }
            #expect(end == .attemptFailed(Self.refused))
            #expect(state.retryAt == now + delay)
            if say { said.append(now) }
            delays[now] = delay
            now += delay
        }
        #expect(delays[100] == 0.5 && delays[129.5] == 0.5, "0.5 s for the first half minute")
        #expect(delays[130] == 1)
        #expect(delays.filter { $0.key >= 130 && $0.key < 400 }.values.allSatisfy { $0 == 1 || $0 == 2 })
        #expect(delays.filter { $0.key >= 400 }.values.allSatisfy { $0 == 2 }, "2 s after five minutes")
        #expect(said.first == 100)
        #expect(zip(said, said.dropFirst()).allSatisfy { $1 - $0 >= 10 && $1 - $0 < 12 }, "said every 10 s: \(said)")
        let unreachable = AnyFailure(ConnectError.unreachable(host: "vps", port: 22, reason: "timed out"))
        let late = state.attemptFailed(unreachable, sessionUp: false, now: now, random: 1)
        guard case .probe(.attemptFailed(unreachable), 2.2, _) = late else {
            Issue.record("an unreachable VPS is not probed every 2 s (+10 %) after five minutes")
            return
        }
        // sshd answers and fails the handshake: the backoff again, where it was; then a session ends the outage.
        let penalized = state.attemptFailed(Self.penalty, sessionUp: false, now: now + 3, random: 0)
        #expect(penalized == .retry(.attemptFailed(Self.penalty), delay: 8))
        #expect(state.outage.since == nil)
        _ = state.attemptFailed(Self.refused, sessionUp: false, now: now + 20, random: 0)
        _ = state.sessionStarted(now: now + 21)
        #expect(state.outage.since == nil && !state.attemptIsQuiet(now: now + 22))
    }

    @Test("only attempts that reached no SSH server are probed: a penalty, a host key, a refused key keep their rules")
    func whatReachedNoServer() {
        #expect(OutageProbe.reachedNoServer(Self.refused))
        #expect(
            OutageProbe.reachedNoServer(ConnectError.unreachable(host: "vps", port: 22, reason: "no route to host")))
        #expect(OutageProbe.reachedNoServer(ConnectError.connectTimeout(host: "vps", port: 22, seconds: 15)))
        #expect(!OutageProbe.reachedNoServer(Self.penalty))
        #expect(!OutageProbe.reachedNoServer(Self.hostKey))
        #expect(!OutageProbe.reachedNoServer(ConnectError.cannotResolve(host: "vps", reason: "no such host")))
    }
}
