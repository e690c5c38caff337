import Foundation

/// When `SessionDriver`'s next connection attempt starts, and what roaming is under way: the
/// backoff, the cause noticed outside a round, the probe or reconnect it led to, and a
/// make-before-break replacement. Pure: every method takes the time, and the driver gathers
/// the facts (addresses, the connector, the forward) and does what it is told, so tests walk
/// it through each cause with their own clock.
struct ReconnectState {
    /// A roaming cause and when it was noticed (monotonic seconds).
    struct Noticed: Equatable {
        let cause: RoamingCause
        let since: Double
    }

    /// What to do about a cause while a session is up.
    enum Step: Equatable {
        /// Probe the session; its answer is due by `deadline`.
        case probe(deadline: Double)
        /// Connect a new session beside the live one, which serves until it is up.
        case replace
        /// Drop the session for `end`, first saying goodbye to the VPS when `sayGoodbye`
        /// (it then frees what the session held, a remote forward's port, at once).
        case drop(SessionEnd, sayGoodbye: Bool)
    }

    /// What a failed connection attempt leads to.
    enum AttemptVerdict: Equatable {
        /// The replacement (made for the reason given) failed; the live session stays.
        case keepCurrent(ReconnectReason)
        /// The run ends with the error.
        case giveUp
        /// The next attempt starts after `delay` seconds; `end` says why.
        case retry(SessionEnd, delay: Double)
        /// The attempt reached no SSH server (`OutageProbe`): the next starts after `delay`
        /// seconds; `say` is false while the outage was said less than `OutageProbe.sayEvery` ago.
        case probe(SessionEnd, delay: Double, say: Bool)
    }

    /// Whether the first connection's failure ends the run (a person is watching).
    let exitOnFirstFailure: Bool
    /// Whether a refusal that ends by itself is waited out even on the first connection.
    let waitsOutPenalty: Bool

    private var policy = ReconnectPolicy()
    /// Attempts that reached no server are tried again often (`OutageProbe`).
    private(set) var outage = OutageProbe()
    /// When the next attempt starts; nil while a session is up or an attempt runs.
    private(set) var retryAt: Double?
    /// A cause noticed outside a round (a wake, SIGUSR1, a network change), acted on in the next.
    private(set) var pending: Noticed?
    /// The cause being dealt with: a probe or a reconnect under way.
    private(set) var roaming: Noticed?
    /// A make-before-break reconnect: the next session replaces the live one.
    private(set) var replacing = false
    /// Why the replacement under way was started (its failure is said by it).
    private var replacingFor = ReconnectReason.requested
    /// Connection attempts since start.
    private(set) var attempts = 0
    private(set) var everConnected = false
    /// The penalty has been named in full once since the last session.
    private var penaltySaid = false

    init(exitOnFirstFailure: Bool, waitsOutPenalty: Bool) {
        self.exitOnFirstFailure = exitOnFirstFailure
        self.waitsOutPenalty = waitsOutPenalty
    }

    // MARK: Attempts

    /// Whether the attempt starting at `now` is one more of an outage already said: its
    /// `connecting` line is not repeated.
    func attemptIsQuiet(now: Double) -> Bool { outage.isQuiet(now: now) }

    /// An attempt starts; its number since start.
    mutating func attemptStarted() -> Int {
        attempts += 1
        return attempts
    }

    /// Whether the next attempt starts at `now`: its time has come and none is running.
    mutating func attemptIsDue(now: Double, connectorRunning: Bool) -> Bool {
        guard let at = retryAt, now >= at, !connectorRunning else { return false }
        retryAt = nil
        return true
    }

    /// A session came up at `now`: the roaming that led to it ends (the event that says so).
    mutating func sessionStarted(now: Double) -> RoamingEvent? {
        replacing = false
        everConnected = true
        penaltySaid = false
        outage.reset()
        guard let roaming else { return nil }
        self.roaming = nil
        return .reconnected(roaming.cause, after: now - roaming.since)
    }

    /// An attempt failed with `error` (`sessionUp`: a session still serves beside it).
    mutating func attemptFailed(
        _ error: any OCTunnelFailure, sessionUp: Bool, now: Double,
        random: Double = Double.random(in: -1...1)
    ) -> AttemptVerdict {
        if replacing && sessionUp {
            replacing = false
            roaming = nil
            return .keepCurrent(replacingFor)
        }
        let waitedOut = error.passesByItself && waitsOutPenalty
        if error.isFatalOnReconnect || (!everConnected && exitOnFirstFailure && !waitedOut) { return .giveUp }
        if OutageProbe.reachedNoServer(error) {
            let (delay, say) = outage.failed(now: now, random: random)
            retryAt = now + delay
            return .probe(.attemptFailed(AnyFailure(error)), delay: delay, say: say)
        }
        outage.reset()
        let end: SessionEnd =
            error.passesByItself && penaltySaid ? .stillClosedBeforeGreeting : .attemptFailed(AnyFailure(error))
        if error.passesByItself { penaltySaid = true }
        return .retry(end, delay: retry(after: end, uptime: nil, now: now, random: random))
    }

    /// A session that lived `uptime` seconds (nil: an attempt) ended for `end`: the delay
    /// before the next attempt, none after roaming.
    mutating func retry(
        after end: SessionEnd, uptime: Double?, now: Double,
        random: Double = Double.random(in: -1...1)
    ) -> Double {
        let delay = end.retriesAtOnce ? 0 : policy.nextDelay(afterUptime: uptime, random: random)
        retryAt = now + delay
        return delay
    }

    // MARK: Roaming

    /// Notes a cause seen outside a round; a network change does not replace a pending
    /// reconnect request.
    mutating func notice(_ cause: RoamingCause, since: Double) {
        if case .networkChange = cause, pending?.cause == .requested { return }
        pending = Noticed(cause: cause, since: since)
    }

    /// The pending cause, once (no session is up to act on it).
    mutating func takePending() -> Noticed? {
        defer { pending = nil }
        return pending
    }

    /// The cause to act on this round with a live session: the pending one, else a client
    /// that arrived while the session was quiet (`quietFor`: seconds since the VPS was last
    /// heard; nil when it was heard within an interval or a probe is under way). While a
    /// replacement connects (its attempt began at `replacementStartedAt`), only a network change
    /// or a wake noticed after that attempt began: the attempt may be on a path that is gone, so
    /// it is abandoned (`act`) and the live session decided on as usual; nothing else.
    mutating func causeToActOn(
        clientsArrived: Bool, quietFor: Double?, replacementStartedAt: Double?, now: Double
    ) -> Noticed? {
        var noticed = takePending()
        if noticed == nil, clientsArrived, let quietFor {
            noticed = Noticed(cause: .clientAfterSilence(quietFor), since: now)
        }
        guard let noticed else { return nil }
        guard replacing else { return noticed }
        guard let startedAt = replacementStartedAt, startedAt < noticed.since, noticed.cause.movesThePath else {
            return nil
        }
        return noticed
    }

    /// What to do about `noticed` with a session up, given `decision` (made from the facts),
    /// and the event that says it. `abandonAttempt`: a replacement was connecting (it began
    /// before `noticed`, `causeToActOn`); it is dropped, and started again on the new path when
    /// the step still wants one (`replacing`).
    mutating func act(
        on noticed: Noticed, decision: RoamingDecision, allowsOverlap: Bool,
        now: Double
    ) -> (step: Step, event: RoamingEvent, abandonAttempt: Bool) {
        let abandon = replacing
        if roaming == nil || noticed.cause == .requested || abandon { roaming = noticed }
        switch decision {
        case .probe(let deadline):
            // A replacement abandoned here still has its reason: it starts again, the live session is probed.
            return (.probe(deadline: deadline), RoamingEvent.probing(noticed.cause, deadline: deadline - now), abandon)
        case .reconnect(let reason):
            policy.networkChanged()
            let event = RoamingEvent.reconnectingNow(noticed.cause, reason: reason.text)
            if reason.oldPathWorks && allowsOverlap {
                replacing = true
                replacingFor = reason
                return (.replace, event, abandon)
            }
            replacing = false
            return (.drop(.roamed(noticed.cause, reason), sayGoodbye: noticed.cause == .requested), event, abandon)
        }
    }

    /// What to do about `noticed` while no session is up (`attemptStartedAt`: when the attempt
    /// under way began, nil when none runs): the next attempt starts now, abandoning one that
    /// began before the cause (on a network that may be gone). Nil: nothing to do.
    mutating func actWithoutSession(
        on noticed: Noticed, attemptStartedAt: Double?,
        now: Double
    ) -> (abandonAttempt: Bool, event: RoamingEvent)? {
        policy.networkChanged()
        let reason: String
        if let startedAt = attemptStartedAt {
            guard startedAt < noticed.since || noticed.cause == .requested else { return nil }
            reason = "no session; the attempt under way began before, a new one starts now"
        } else {
            guard let at = retryAt, at > now else { return nil }
            reason = "no session; attempting now"
        }
        if roaming == nil { roaming = noticed }
        retryAt = now
        return (attemptStartedAt != nil, RoamingEvent.reconnectingNow(noticed.cause, reason: reason))
    }

    /// The quick probe was answered `seconds` after it was asked: the doubt ends (the event
    /// that says so), unless a replacement is connecting.
    mutating func probeAnswered(in seconds: Double) -> RoamingEvent? {
        guard let roaming, !replacing else { return nil }
        self.roaming = nil
        return .kept(roaming.cause, answeredIn: seconds)
    }

    /// The quick probe went unanswered for `seconds`: the session ends, and the next attempt
    /// starts at once with the backoff started over.
    mutating func probeUnanswered(after seconds: Double) -> SessionEnd {
        policy.networkChanged()
        return .unansweredProbe(seconds: seconds, after: roaming?.cause)
    }
}

extension RoamingCause {
    /// Whether the path to the VPS may have moved with this cause (a network change, a wake): an
    /// attempt begun before it may wait out its connect timeout on a path that is gone.
    fileprivate var movesThePath: Bool {
        switch self {
        case .networkChange, .wake: return true
        case .clientAfterSilence, .requested: return false
        }
    }
}

/// Exponential backoff with jitter: 1 s doubling to 30 s, back to 1 s after a minute of uptime.
public struct ReconnectPolicy: Sendable {
    public var initial: Double = 1
    public var maximum: Double = 30
    public var jitter: Double = 0.2
    public var stableAfter: Double = 60
    private(set) var failures = 0

    public init() {}

    /// The delay before the next attempt; `uptime` is how long the session that just died lived.
    public mutating func nextDelay(afterUptime uptime: Double?, random: Double = Double.random(in: -1...1)) -> Double {
        if let uptime, uptime >= stableAfter { failures = 0 }
        let base = min(maximum, initial * pow(2, Double(failures)))
        failures += 1
        return max(0.1, min(maximum, base * (1 + jitter * random)))
    }

    /// The network changed (or the machine woke): what failed before says nothing about the
    /// new path, so the backoff starts over.
    public mutating func networkChanged() { failures = 0 }
}
