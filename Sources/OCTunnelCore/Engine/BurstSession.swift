import Foundation

// A second session to the VPS for a burst of new connections (issue 56): when it pays, how it
// lives beside the driver's session, and when it goes. docs/architecture.md, "A second session
// for bursts", has the numbers behind each constant.

/// When a second session pays and when it is over, as pure arithmetic on the loop's clock.
///
/// libssh2 keeps one channel open in flight per session (channel.c:144), so N clients queued for
/// a channel wait N round trips on one session. A second session costs about six round trips
/// to come up (TCP, the key exchange's two, the user-auth service and the signed key, its idle
/// channel), during which the first serves six of the queue; it pays when more than that wait,
/// and halves what is left. A queue of `queueWorthASession` or more opens is therefore the
/// signal (clients waiting, and the pool's refills while clients have just waited): a browser's
/// six (served by the pool a session start fills) never reaches it, a script's or an agent's
/// twenty does, and so do bursts that come back before one session has refilled the pool.
struct BurstRule {
    /// Clients waiting for a channel at once that make a second session worth its cost.
    static let queueWorthASession = 8
    /// How long the extra session stays with no client waiting and no stream on it: long
    /// enough to serve bursts that come back (a dev server's reloads, every 0.7 s in the
    /// bench), short enough that an idle tunnel is one session again well before 30 s.
    static let idleClose = 10.0
    /// This rule's `idleClose` (shorter in the engine's unit tests).
    let idleClose: Double
    /// After a client last waited, how long the extra session still refills the pool; after
    /// that the pool is the driver's session's alone, so the extra drains and can close.
    static let poolHelp = 3.0
    /// After a second session failed (refused, penalized, unreachable), how long before another
    /// is tried: the first session serves alone meanwhile, and sshd is not asked again and again.
    static let afterFailure = 60.0

    init(idleClose: Double = Self.idleClose) { self.idleClose = idleClose }

    /// When the extra session last had a client waiting or a stream on it.
    private(set) var busyAt = -Double.infinity
    /// No second session before this (the last one failed).
    private(set) var notBefore = -Double.infinity

    /// Whether a queue of `queue` clients waiting for a channel calls for a second session now.
    func wantsExtra(queue: Int, now: Double) -> Bool { queue >= Self.queueWorthASession && now >= notBefore }

    /// The extra session came up.
    mutating func started(now: Double) { busyAt = now }

    /// One round with the extra session up: `queue` clients waiting; `held`: a stream, an open or a
    /// burst's client waiting for it. A queue shorter than a burst's is the driver's to serve.
    mutating func note(queue: Int, held: Bool, now: Double) {
        if queue >= Self.queueWorthASession || held { busyAt = now }
    }

    /// When the extra session closes if nothing happens meanwhile.
    var closeAt: Double { busyAt + idleClose }

    /// Whether the burst is over: nothing waited and nothing ran on the extra for `idleClose`.
    func isOver(now: Double) -> Bool { now >= closeAt }

    /// A second session failed to come up: none for `afterFailure`.
    mutating func failed(now: Double) { notBefore = now + Self.afterFailure }
}

/// The extra session of a burst, beside the driver's: connected off the loop like the first
/// (`ConnectorThread`, the same settings: target, key, host-key check, algorithms), driven each
/// round after the driver's (its own keepalive, re-keys, send buffer, freed channels), closed
/// when `BurstRule` says the burst is over. At most one: two sessions halve a queue, a third
/// would save a round trip in six for another login on the VPS.
///
/// Streams stay on the session that opened them: the extra dying ends only its own streams,
/// the driver's dying leaves the extra's running (it then serves waiting clients alone until
/// the driver's is back). A failed extra session is said once per run and never touches the first.
final class BurstSession: PollOwner {
    private let keepaliveInterval: Double
    private let scratch: ScratchBuffer
    private let emit: @Sendable (EngineEvent) -> Void
    private let connector: any ExtraSessionSource
    /// False where a second session must not come up: a remote listen belongs to one session.
    let enabled: Bool
    private(set) var extra: LiveSession?
    private var rule: BurstRule
    /// Extra sessions that came up since start (for `status`).
    private(set) var opened = 0
    private var saidFailure = false
    private var socketReady = false

    init(
        source: any ExtraSessionSource, keepalive: Double, scratch: ScratchBuffer, enabled: Bool,
        rule: BurstRule = BurstRule(),
        emit: @escaping @Sendable (EngineEvent) -> Void
    ) {
        connector = source
        self.rule = rule
        keepaliveInterval = keepalive
        self.scratch = scratch
        self.enabled = enabled
        self.emit = emit
    }

    /// Sessions beside the driver's now: 0 or 1.
    var count: Int { extra == nil ? 0 : 1 }

    func ready(tag: Int, events: PollEvents) { socketReady = true }

    /// Adopts a finished attempt: the extra session, or a failure said once.
    func take(forwards: [SessionForward], now: Double) {
        guard let result = connector.take() else { return }
        switch result {
        case .success(let established):
            let live = LiveSession(
                session: established.session, idleChannel: established.idleChannel, scratch: scratch,
                keepaliveInterval: keepaliveInterval, highWater: SessionDriver.highWater, now: now)
            extra = live
            opened += 1
            rule.started(now: now)
            for forward in forwards { forward.extraStarted(live, now: now) }
        case .failure(let error):
            rule.failed(now: now)
            guard !saidFailure else { return }
            saidFailure = true
            emit(
                .warning(
                    "a second session for a burst of connections failed (\(error.localizedDescription)); "
                        + "the first serves them alone"))
        }
    }

    /// Adds the extra session's socket and timers to the coming poll.
    func register(in set: PollSet, now: Double) {
        guard let extra else { return }
        let session = extra.session
        set.watch(
            session.socket, events: session.outgoingBacklog > 0 ? [.readable, .writable] : .readable, owner: self,
            tag: 0)
        set.wake(at: extra.keepalive.nextDeadline)
        if extra.isFreeingChannels || extra.keepalive.isOutstanding { set.wake(at: now + 0.5) }
        if extra.turn.hasPriorityPending { set.wakeNow() }
        set.wake(at: rule.closeAt)
    }

    /// After the driver's round: the extra session's round, then whether to close it; or, with
    /// none, whether the queue calls for one (only beside a driver's session that is up).
    func drive(primary: LiveSession?, forwards: [SessionForward], now: Double) {
        defer { socketReady = false }
        guard enabled else { return }
        let queue = forwards.reduce(0) { $0 + $1.channelQueue(now: now) }
        guard let extra else {
            if primary != nil, !connector.isRunning, rule.wantsExtra(queue: queue, now: now) {
                connector.start()
            }
            return
        }
        round(extra, forwards: forwards, now: now)
        guard extra.isAlive else { return lost(extra, for: extra.failure ?? .stopped, forwards: forwards) }
        rule.note(queue: queue, held: forwards.contains { $0.holds(extra) }, now: now)
        if rule.isOver(now: now) { close(forwards: forwards) }
    }

    /// One round on the extra session, as the driver's: flush, the idle channel's read (it
    /// reads the socket for every channel), keepalive, the forwards' part, frees, one send, ACK.
    private func round(_ extra: LiveSession, forwards: [SessionForward], now: Double) {
        let session = extra.session
        session.newRound()
        extra.beginRound()
        if session.outgoingBacklog > 0 && !session.flushOutgoing() {
            return extra.fail(.sendFailed(session.outgoingFailure))
        }
        if socketReady, case .failed(let code) = extra.idleChannel.read(into: scratch.pointer, count: scratch.size) {
            extra.fail(code)
        }
        extra.noteInbound(now: now)
        if extra.isAlive {
            switch extra.keepalive.check(now: now, channel: extra.idleChannel) {
            case .alive, .answered: break
            case .silent(let seconds): extra.fail(.silence(seconds: seconds))
            case .failed(let code): extra.fail(code)
            case .unanswered(let seconds): extra.fail(.silence(seconds: Int(seconds)))
            }
        }
        for forward in forwards where extra.isAlive { forward.driveExtra(extra, now: now) }
        if extra.isAlive { extra.freeReleasedChannels() }
        if extra.isAlive && !session.flushOutgoing() { extra.fail(.sendFailed(session.outgoingFailure)) }
        if extra.isAlive { session.acknowledgeReceived() }
    }

    /// The burst is over: pooled channels handed back, a goodbye, the session freed.
    func close(forwards: [SessionForward]) {
        guard let extra else { return }
        for forward in forwards { forward.releaseChannels(on: extra) }
        extra.freeReleasedChannels()
        extra.session.disconnect(reason: "burst over")
        _ = extra.session.flushOutgoing()
        lost(extra, for: .stopped, forwards: forwards)
    }

    /// The extra session goes for `end` (it failed, the network under it changed, or it closes):
    /// freed first, then the forwards end what was on it.
    func lost(_ extra: LiveSession, for end: SessionEnd, forwards: [SessionForward]) {
        extra.session.close()
        extra.dropReleasedChannels()
        self.extra = nil
        for forward in forwards { forward.sessionLost(extra, end) }
    }

    /// The network under the sessions is gone (the driver drops its own): the extra goes too.
    func drop(for end: SessionEnd, forwards: [SessionForward]) {
        if connector.isRunning { connector.abandon() }
        guard let extra else { return }
        lost(extra, for: end, forwards: forwards)
    }

    /// The loop is stopping, after the driver's goodbye: the forwards' goodbye on the extra session
    /// (EOFs on its streams) and a disconnect while `deadline` lasts, within a short timeout each,
    /// then freed; an attempt under way is abandoned.
    func shutdown(forwards: [SessionForward], reason: String, deadline: Double) {
        if connector.isRunning { connector.abandon() }
        guard let extra else { return }
        let session = extra.session
        session.setBlocking(true)
        session.setTimeout(milliseconds: 300)
        for forward in forwards { forward.goodbye(extra, deadline: deadline) }
        _ = session.flushOutgoing()
        if MonotonicClock.now() < deadline { session.disconnect(reason: reason) }
        session.close()
        extra.dropReleasedChannels()
        self.extra = nil
    }
}

/// Where a burst's extra session comes from: `ConnectorSource` (libssh2, on the connector's
/// thread) in a run; an in-memory session in the engine's unit tests.
protocol ExtraSessionSource: AnyObject {
    /// Whether an attempt is under way.
    var isRunning: Bool { get }
    /// Starts an attempt; the loop is woken when it ends.
    func start()
    /// The finished attempt, once: a session with its idle channel, or why it failed.
    func take() -> Result<(session: any EngineSession, idleChannel: any EngineChannel), AnyFailure>?
    /// Forgets the attempt under way (what it brings is closed).
    func abandon()
}

/// The extra session made as the driver's is: its `SessionOpener` (libssh2's `SSHConnector` with the
/// same settings: target, key, host-key check, algorithms) on a `ConnectorThread`, quietly (no stage lines).
final class ConnectorSource: ExtraSessionSource {
    private let opener: any SessionOpener
    private let thread = ConnectorThread()
    private let wake: @Sendable () -> Void

    init(opener: any SessionOpener, wake: @escaping @Sendable () -> Void) {
        self.opener = opener
        self.wake = wake
    }

    var isRunning: Bool { thread.isRunning }
    func start() { thread.start(opener: opener, onStage: { _ in }, wake: wake) }
    func abandon() { thread.abandon() }

    func take() -> Result<(session: any EngineSession, idleChannel: any EngineChannel), AnyFailure>? {
        thread.take().map { result in result.map { ($0.session, $0.idleChannel) } }
    }
}
