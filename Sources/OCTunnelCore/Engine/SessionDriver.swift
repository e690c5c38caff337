import Foundation

// The session: its life in the loop (`SessionDriver`: connect, rounds, keepalive and roaming,
// teardown, reconnect, goodbye), what forwards and streams see of it (`LiveSession`: send
// room, channels to free, the session's end), and its one call in flight (`OpenTurn`). What
// `status` says of it is SessionDriverStatus.swift.

/// One SSH session to the VPS over its whole life: connecting on a helper thread, running
/// its rounds on the loop, keepalive and dead-session detection, teardown and reconnect with
/// backoff, and a graceful goodbye. What the session is used for is its `SessionForward`s,
/// each driven in turn every round (one session carries them all, as `ssh -L -L -R` does).
///
/// A round: flush what the last one left, read the idle channel (it reads the socket for
/// every channel, so a readable socket never spins), keepalive, the forward's work, free
/// released channels, then one `send()` for everything libssh2 sent meanwhile, and an ACK for
/// what the round read if that send did not carry one. What the driver does when the network
/// may have gone away is `roam` and `checkKeepalive`, below.
final class SessionDriver: PollOwner {
    let settings: ConnectionSettings
    private let keepaliveInterval: Double
    private let loop: EventLoop
    let forwards: [SessionForward]
    let emit: @Sendable (EngineEvent) -> Void
    private let scratch = ScratchBuffer()
    let connector = ConnectorThread()
    /// How sessions are opened (libssh2's `SSHConnector`; a test's in memory).
    private let opener: any SessionOpener
    /// The send buffer's high-water mark (see `LiveSession.highWater`).
    static let highWater = EngineKnobs.sendHighWater

    /// The sessions up: the current one, and those draining after a planned reconnect.
    private(set) var sessions = SessionSet()
    /// The session new connections go to.
    var live: LiveSession? { sessions.current }
    /// The sessions this turn's poll watches, by tag.
    private var polled: [LiveSession] = []
    /// When the next attempt starts, and the roaming under way.
    var reconnect: ReconnectState
    /// What `status` reports across sessions.
    var record = SessionRecord()
    private var statusServer: StatusServer?
    private let network = NetworkWatcher()
    private var wake = WakeDetector()
    /// The last health test, set from any thread; `status` reports it.
    let health = Locked<StatusSnapshot.Health?>(nil)
    let notifications = Locked<[StatusSnapshot.Notified]>([])
    /// How many requests wait for an answer, once the event follower has said (nil before).
    let permissionsWaiting = Locked<Int?>(nil)
    /// A second session while clients queue for channels (BurstSession.swift).
    private(set) lazy var burst = BurstSession(
        source: ConnectorSource(opener: opener, wake: { [loop = UncheckedLoop(loop: loop)] in loop.loop.wakeUp() }),
        keepalive: keepaliveInterval, scratch: scratch, enabled: burstAllowed, emit: emit)
    private let burstAllowed: Bool

    /// `waitsOutPenalty`: whether a refusal that ends by itself (`OCTunnelFailure.passesByItself`:
    /// sshd penalizing this address) is waited out even on the very first connection (`tunnel
    /// up`, `home up`; not `tunnel check`, which reports it).
    /// `opener`: how sessions are opened (nil: libssh2's `SSHConnector` for `settings`).
    init(
        settings: ConnectionSettings, keepalive: Double, exitOnFirstFailure: Bool, waitsOutPenalty: Bool = true,
        loop: EventLoop,
        forwards: [SessionForward], opener: (any SessionOpener)? = nil, emit: @escaping @Sendable (EngineEvent) -> Void
    ) {
        self.settings = settings
        self.opener = opener ?? SSHConnector(settings: settings)
        self.keepaliveInterval = keepalive
        reconnect = ReconnectState(exitOnFirstFailure: exitOnFirstFailure, waitsOutPenalty: waitsOutPenalty)
        burstAllowed = forwards.allSatisfy(\.allowsOverlap)
        self.loop = loop
        self.forwards = forwards
        self.emit = emit
    }

    /// Runs the loop until a stop request (returns after a graceful goodbye) or a failure
    /// retrying cannot fix (throws): one turn = adopt a connection result, build the poll set,
    /// poll, then one round on the session.
    func run() throws {
        defer { statusServer?.stop() }
        SignalHandling.ignoreSIGPIPE()
        startConnector()
        while try turn() {}
    }

    /// One turn of the loop; false once stopped (after the goodbye). `pollAtMost` caps the
    /// poll's sleep (a test's rounds; the loop's own cap is 60 s).
    func turn(pollAtMost: Double = 60) throws -> Bool {
        let now = MonotonicClock.now()
        if let asleep = wake.check(now: now, suspended: MonotonicClock.suspended()) {
            reconnect.notice(.wake(asleep), since: now)
        }
        if loop.takeReconnectRequest() { reconnect.notice(.requested, since: now) }
        if let result = connector.take() { try connectorFinished(result, now: now) }
        burst.take(forwards: forwards, now: now)
        if reconnect.attemptIsDue(now: now, connectorRunning: connector.isRunning) { startConnector() }
        if loop.stopRequested {
            shutdownGracefully()
            return false
        }
        loop.pollSet.reset()
        register(in: loop.pollSet, now: now)
        loop.pollSet.wake(at: now + pollAtMost)
        // poll(2) sleeps at most 60 s (PollSet), not at all after `wakeNow` (deadline -∞);
        // back later than that, the process was stopped.
        wake.expect(wakeBy: max(now, min(loop.pollSet.deadline, now + 60)))
        do {
            try loop.poll(now: now)
        } catch {
            throw ConnectError.sshFailure(
                host: settings.target.host, port: settings.target.port, detail: error.description)
        }
        drive(now: MonotonicClock.now())
        return true
    }

    /// Starts a connection attempt on the connector's thread.
    func startConnector() {
        let quiet = reconnect.attemptIsQuiet(now: MonotonicClock.now())
        let attempt = reconnect.attemptStarted()
        if !quiet { emit(.connecting(target: settings.target, attempt: attempt)) }
        let emit = self.emit
        let loop = UncheckedLoop(loop: loop)
        connector.start(opener: opener, onStage: { emit(.stage($0)) }, wake: { loop.loop.wakeUp() })
    }

    /// Adopts a finished connection attempt: a new session (replacing the live one, if any,
    /// which drains: make before break), or a failure, retried or thrown when retrying cannot fix it.
    private func connectorFinished(_ result: Result<OpenedSession, AnyFailure>, now: Double) throws {
        switch result {
        case .success(let established):
            let live = LiveSession(
                session: established.session, idleChannel: established.idleChannel, scratch: scratch,
                keepaliveInterval: keepaliveInterval, highWater: Self.highWater, now: now)
            if let old = sessions.adopt(live, now: now) {
                // Make before break: new connections go to the new session from now on; the
                // old one keeps its streams until they end (`closeDrained`).
                for forward in forwards { forward.releaseChannels(on: old) }
            }
            record.started(established.info)
            emit(.connected(target: settings.target, info: established.info))
            for forward in forwards { forward.sessionStarted(live, now: now) }
            if let event = reconnect.sessionStarted(now: now) { say(event) }
        case .failure(let error):
            switch reconnect.attemptFailed(error, sessionUp: live != nil, now: now) {
            case .keepCurrent(let reason):
                // The old session still serves; the replacement is not needed any more.
                record.failed(.attemptFailed(error))
                emit(
                    .warning(
                        "\(reason.text), but a new session failed (\(error.localizedDescription)); the current one stays"
                    ))
            case .giveUp:
                for forward in forwards { forward.stop(.attemptFailed(error)) }
                throw error
            case .retry(let end, let delay):
                retrying(end, in: delay)
            case .probe(let end, let delay, let say):
                // The VPS answers no connection: tried again within a second (`OutageProbe`), said every 10 s.
                if say { retrying(end, in: delay) } else { record.failed(end) }
            }
        }
    }

    /// Says why there is no session now and when the next attempt starts.
    private func retrying(_ end: SessionEnd, in delay: Double) {
        record.failed(end)
        emit(.disconnected(reason: end, retryIn: delay))
    }

    /// Adds each session's SSH socket and timers (and the forwards') to the coming poll.
    private func register(in set: PollSet, now: Double) {
        if let retryAt = reconnect.retryAt { set.wake(at: retryAt) }
        polled.removeAll(keepingCapacity: true)
        if let live { register(live, in: set, now: now) }
        for old in sessions.draining {
            register(old, in: set, now: now)
            set.wake(at: old.drainingSince.map { $0 + SessionSet.drainLimit } ?? now)
        }
        for forward in forwards { forward.register(in: set, live: live, now: now) }
        burst.register(in: set, now: now)
        statusServer?.register(in: set)
        network.register(in: set)
        if reconnect.pending != nil { set.wakeNow() }
    }

    /// One session's socket and timers.
    private func register(_ live: LiveSession, in set: PollSet, now: Double) {
        // Bytes waiting for the socket need it writable as well as the usual readable.
        let events: PollEvents = live.session.outgoingBacklog > 0 ? [.readable, .writable] : .readable
        set.watch(live.session.socket, events: events, owner: self, tag: polled.count)
        polled.append(live)
        set.wake(at: live.keepalive.nextDeadline)
        if live.isFreeingChannels || live.keepalive.isOutstanding { set.wake(at: now + 0.5) }
        // A turn just ended with forwards waiting for it: they ask in the next round, now.
        if live.turn.hasPriorityPending { set.wakeNow() }
    }

    func ready(tag: Int, events: PollEvents) { polled[tag].socketReady = true }

    /// One round after poll: each session's work and the forwards' on it (draining sessions
    /// first, then the current one), or the forwards alone while no session is up.
    private func drive(now: Double) {
        let socket = live?.session.socket
        if let settled = network.settled(
            now: now, ownAddress: { socket.flatMap(InterfaceAddresses.local(of:)) },
            nothingToKeep: live == nil && !connector.isRunning)
        {
            reconnect.notice(.networkChange(NetworkWatcher.summary(settled.changes)), since: settled.since)
        }
        defer { burst.drive(primary: live, forwards: forwards, now: now) }
        for old in sessions.draining { drive(old, now: now) }
        guard let live else {
            if let noticed = reconnect.takePending() { roamWithoutSession(noticed, now: now) }
            for forward in forwards { forward.drive(nil, now: now) }
            return
        }
        drive(live, now: now)
        if !sessions.draining.isEmpty { closeDrained(now: now) }
    }

    /// One session's round: flush, the idle read, roaming (the current session's), keepalive,
    /// the forwards' work on it, channels freed, one send, the acknowledgement.
    private func drive(_ live: LiveSession, now: Double) {
        let session = live.session
        session.newRound()
        live.beginRound()
        defer { live.socketReady = false }
        if session.outgoingBacklog > 0 && !session.flushOutgoing() {
            return ended(live, for: .sendFailed(session.outgoingFailure), now: now)
        }
        if live.socketReady, case .failed(let code) = live.idleChannel.read(into: scratch.pointer, count: scratch.size)
        {
            live.fail(code)
        }
        live.noteInbound(now: now)
        if live.isAlive && !live.isDraining { roam(live, now: now) }
        if live.isAlive { checkKeepalive(live, now: now) }
        for forward in forwards where live.isAlive { forward.drive(live, now: now) }
        if live.isAlive { live.freeReleasedChannels() }
        if live.isAlive && !session.flushOutgoing() { live.fail(.sendFailed(session.outgoingFailure)) }
        if live.isAlive { session.acknowledgeReceived() }
        if let end = live.failure { ended(live, for: end, now: now) }
    }

    /// Frees a session that is done, then tells the forwards: the session goes first, so
    /// channels dropped after it never touch the dead socket.
    private func drop(_ old: LiveSession, for end: SessionEnd) {
        old.session.close()
        old.dropReleasedChannels()
        sessions.remove(old)
        for forward in forwards { forward.sessionLost(old, end) }
    }

    /// A session failed: a draining one just goes (its streams with it); the current one goes
    /// and, unless a draining one still works and takes over again, the next attempt is scheduled.
    /// Not after roaming (the path itself changed): the next attempt goes the new way.
    private func ended(_ live: LiveSession, for end: SessionEnd, now: Double) {
        guard !live.isDraining else { return drop(live, for: end) }
        drop(live, for: end)
        if !end.retriesAtOnce, let back = sessions.restoreDrained(now: now) {
            record.failed(end)
            emit(.warning("the new session ended (\(end.text)); the one it replaced serves again"))
            for forward in forwards { forward.sessionStarted(back, now: now) }
            return
        }
        retrying(end, in: reconnect.retry(after: end, uptime: now - live.startedAt, now: now))
    }

    /// Closes draining sessions that no forward holds any more, or that drained too long:
    /// a goodbye to the VPS, then freed.
    private func closeDrained(now: Double) {
        for old in sessions.draining
        where SessionSet.overdue(old, now: now) || !forwards.contains(where: { $0.holds(old) }) {
            old.session.disconnect(reason: SessionEnd.replaced.text)
            _ = old.session.flushOutgoing()
            drop(old, for: .replaced)
        }
    }

    /// Says goodbye within about 1.2 s, even to a VPS that hangs: the forward's EOFs and a
    /// disconnect while the budget lasts, then the socket is shut before anything is freed, so
    /// no channel free can wait for an answer (each would wait its own timeout).
    private func shutdownGracefully() {
        let end = SessionEnd.stopped
        record.stopping = true
        statusServer?.answerWaiting()
        statusServer?.stop()
        emit(.stopping(reason: end))
        let deadline = MonotonicClock.now() + 1.2
        let all = (live.map { [$0] } ?? []) + sessions.draining
        for live in all {
            live.session.setBlocking(true)
            live.session.setTimeout(milliseconds: 300)
        }
        for live in all {
            for forward in forwards { forward.goodbye(live, deadline: deadline) }
        }
        for live in all {
            if MonotonicClock.now() < deadline { live.session.disconnect(reason: end.text) }
            live.session.close()
            live.dropReleasedChannels()
            sessions.remove(live)
        }
        burst.shutdown(forwards: forwards, reason: end.text, deadline: deadline)
        for forward in forwards { forward.stop(end) }
    }

    /// Answers `status` at `endpoint` (the role's and profile's socket) from this loop, for
    /// any forward: a stale socket is replaced, a live one or one not ours is reported.
    func serveStatus(at endpoint: StatusEndpoint) throws(StatusServerError) {
        statusServer = try StatusServer(endpoint: endpoint, source: self)
    }
}

// MARK: - When the session may have died unnoticed: keepalive and roaming

/// What the driver does when the session may have died unnoticed: the keepalive's verdicts,
/// and the roaming causes (a network change, a wake, a reconnect request, a client after a
/// silence) acted on through `ReconnectState` and `RoamingDecision`.
extension SessionDriver {
    /// Declares the session dead, or probes it, or hears a quick probe's answer.
    func checkKeepalive(_ live: LiveSession, now: Double) {
        switch live.keepalive.check(now: now, channel: live.idleChannel) {
        case .alive: break
        case .silent(let seconds): live.fail(.silence(seconds: seconds))
        case .failed(let code): live.fail(code)
        case .answered(let seconds): if let event = reconnect.probeAnswered(in: seconds) { say(event) }
        case .unanswered(let seconds): live.fail(reconnect.probeUnanswered(after: seconds))
        }
    }

    /// Acts on a network change, a wake, a reconnect request, or a client arriving after a
    /// silence: reconnect now (the session's address is gone, or asked to), else a quick probe.
    func roam(_ live: LiveSession, now: Double) {
        let keepalive = live.keepalive
        let quietFor = keepalive.isQuiet(now: now) && !keepalive.isProbing ? now - keepalive.lastInbound : nil
        guard
            let noticed = reconnect.causeToActOn(
                clientsArrived: forwards.reduce(0) { $0 + $1.takeArrivals() } > 0, quietFor: quietFor,
                replacementStartedAt: connector.isRunning ? connector.startedAt : nil, now: now)
        else { return }
        let socket = live.session.socket
        let overlap = forwards.allSatisfy(\.allowsOverlap)
        let decision = RoamingDecision.decide(
            noticed.cause, localAddress: InterfaceAddresses.local(of: socket),
            addresses: InterfaceAddresses.current(),
            preferredSource: overlap ? InterfaceAddresses.preferredSource(toward: socket) : nil,
            roundTrip: InterfaceAddresses.roundTripTime(of: socket), now: now)
        let (step, event, abandonAttempt) = reconnect.act(
            on: noticed, decision: decision, allowsOverlap: overlap, now: now)
        say(event)
        // A replacement begun before the change may hang on a path that is gone.
        if abandonAttempt { connector.abandon() }
        switch step {
        case .probe(let deadline):
            live.keepalive.probeNow(now: now, deadline: deadline)
        case .replace:
            break
        case .drop(let end, let sayGoodbye):
            if sayGoodbye {
                // The VPS frees what the session held (a remote forward's port) at once.
                live.session.disconnect(reason: "reconnecting")
                _ = live.session.flushOutgoing()
            }
            live.fail(end)
            burst.drop(for: end, forwards: forwards)
        }
        // A new session beside the live one (or again, on the new path, after an abandoned one).
        if reconnect.replacing && !connector.isRunning { startConnector() }
    }

    /// A network change, a wake or a request while no session is up: the next attempt starts
    /// now, not when the backoff would have let it; one that began on the old network may wait
    /// out its whole connect timeout on a path that is gone, so it is abandoned.
    func roamWithoutSession(_ noticed: ReconnectState.Noticed, now: Double) {
        guard
            let step = reconnect.actWithoutSession(
                on: noticed, attemptStartedAt: connector.isRunning ? connector.startedAt : nil,
                now: now)
        else { return }
        if step.abandonAttempt { connector.abandon() }
        record.roamed("\(noticed.cause.headline): attempting now")
        emit(.roaming(step.event))
    }

    /// Emits a roaming event and keeps its line for `status`.
    func say(_ event: RoamingEvent) {
        record.roamed(event.text)
        emit(.roaming(event))
    }
}

// MARK: - The session as forwards and streams see it

/// One authenticated session during its life in the loop, as forwards and streams see it:
/// the libssh2 session, the shared scratch buffer, whether the send buffer has room, and the
/// ways to report what happened (bytes heard, the session's end, a channel to free).
/// Owned by the `SessionDriver`, which tears the session down after any round that failed it.
final class LiveSession {
    /// The session (libssh2's, or a test's in memory) and its idle `session` channel.
    let session: any EngineSession
    let idleChannel: any EngineChannel
    let scratch: ScratchBuffer
    /// Client bytes are not read while more than this waits for the SSH socket; the send
    /// buffer then holds at most this plus one channel write (32 KiB and a packet header).
    let highWater: Int
    let startedAt: Double
    var keepalive: Keepalive
    /// Why the session must be dropped, once a call has failed it.
    private(set) var failure: SessionEnd?
    private var closing: [any EngineChannel] = []
    /// The session's received-byte count when the VPS was last heard (`noteInbound`).
    private var receivedSoFar: Int
    /// Whose turn it is to open a channel or listen (`takeTurn`).
    private(set) var turn = OpenTurn()
    /// Since when this session drains (a planned reconnect replaced it, `SessionSet`): its
    /// streams go on, nothing new is opened on it.
    private(set) var drainingSince: Double?
    /// Whether the session's socket polled readable this turn (the driver's poll sets it).
    var socketReady = false

    init(
        session: any EngineSession, idleChannel: any EngineChannel, scratch: ScratchBuffer, keepaliveInterval: Double,
        highWater: Int,
        now: Double
    ) {
        self.session = session
        self.idleChannel = idleChannel
        self.scratch = scratch
        self.highWater = highWater
        startedAt = now
        keepalive = Keepalive(interval: keepaliveInterval, now: now)
        receivedSoFar = session.receivedBytes
    }

    /// A new round of the loop (the driver's): the turn's priorities age by one.
    func beginRound() { turn.beginRound() }
    var isAlive: Bool { failure == nil }
    var isDraining: Bool { drainingSince != nil }

    /// A new session replaced this one at `now`: it keeps its streams, takes no new ones.
    func beginDraining(now: Double) { drainingSince = now }

    /// The session that replaced this one is gone: this one takes new connections again.
    func endDraining() { drainingSince = nil }

    /// Whether a stream may read more client bytes for the VPS now (the send buffer is below
    /// its high-water mark).
    var hasSendRoom: Bool { session.outgoingBacklog < highWater }

    /// The one place that records the VPS was heard: any byte read from the SSH socket since
    /// the last call (by any call: the idle channel's read, a stream's, a keepalive's) proves
    /// the session alive at `now`. The driver calls it once a round, after the idle read.
    func noteInbound(now: Double) {
        let received = session.receivedBytes
        guard received != receivedSoFar else { return }
        receivedSoFar = received
        keepalive.heard(at: now)
    }

    /// A libssh2 call failed with a session-level `code`: the session is dropped after this
    /// round (libssh2's message is read now, while it is the one for this failure).
    func fail(_ code: Int32) {
        guard failure == nil else { return }
        failure = .vpsClosed(code: code, message: session.error(code, "session").message)
    }

    /// The session must be dropped after this round for `end` (the first reason stays).
    func fail(_ end: SessionEnd) {
        if failure == nil { failure = end }
    }

    /// Whether `owner` may start (or repeat) a call whose state libssh2 keeps in the session
    /// (a channel open, a listen): the turn is the session's, not a forward's (`OpenTurn`).
    /// Not holding it, `owner` is remembered as asking.
    func takeTurn(_ owner: AnyObject) -> Bool { turn.take(owner) }

    /// Whether `takeTurn(owner)` would give `owner` the turn now (for a wake-up: a forward
    /// waiting for another's open must not spin).
    func turnIsFree(for owner: AnyObject) -> Bool { turn.isFree(for: owner) }

    /// `owner`'s call is over (opened, listening or failed): the next may go.
    func endTurn(_ owner: AnyObject) { turn.end(owner) }

    /// Hands a channel that is done to be freed (`libssh2_channel_free` repeats while it would block).
    func release(_ channel: any EngineChannel) { closing.append(channel) }

    /// Channels still being freed: the loop wakes within 0.5 s to continue.
    var isFreeingChannels: Bool { !closing.isEmpty }

    /// One step of freeing every released channel.
    func freeReleasedChannels() {
        var still: [any EngineChannel] = []
        for channel in closing {
            switch channel.free() {
            case .done: continue
            case .wouldBlock: still.append(channel)
            case .failed(let code):
                if LibSSH2Error.isSessionLevel(code) { closing = []; return fail(code) }
            }
        }
        closing = still
    }

    /// Forgets channels waiting to be freed (the session itself is being freed).
    func dropReleasedChannels() { closing.removeAll() }
}

// MARK: - The session's one call in flight

/// Whose turn it is to make a call whose state libssh2 keeps in the session, not the channel:
/// a channel open (channel.c:144) or a listen request. While such a call would block, the next
/// one on the session must be the same call again, so the session's forwards take turns: the
/// one holding the turn repeats its call until it ends the turn.
///
/// Fair without a queue that could outlive its askers: a forward refused the turn while another
/// held it gets the next one first, for the rest of that round and the next (`beginRound`);
/// after that anyone may take it, so a forward that stopped asking can never hold the others
/// up. Alone on its session, a forward always has the turn when it is free.
struct OpenTurn {
    private var holder: ObjectIdentifier?
    /// Refused while the turn was held: they go first once it ends.
    private var asked: Set<ObjectIdentifier> = []
    /// Those of `asked` the ended turn goes to first, until round `firstUntil`.
    private var first: Set<ObjectIdentifier> = []
    private var firstUntil = 0
    private var round = 0

    /// A new round of the loop: a priority older than a full round lapses.
    mutating func beginRound() {
        round += 1
        if round > firstUntil { first.removeAll() }
    }

    /// Whether the turn is `owner`'s now: taken when free and nobody has priority over it;
    /// otherwise `owner` is remembered as asking.
    mutating func take(_ owner: AnyObject) -> Bool {
        let id = ObjectIdentifier(owner)
        if holder == id { return true }
        if isFree(for: id) {
            holder = id
            first.removeAll()
            asked.remove(id)
            return true
        }
        asked.insert(id)
        return false
    }

    /// Whether `take(owner)` would give `owner` the turn now.
    func isFree(for owner: AnyObject) -> Bool { isFree(for: ObjectIdentifier(owner)) }

    private func isFree(for id: ObjectIdentifier) -> Bool {
        holder == id || (holder == nil && (first.isEmpty || first.contains(id)))
    }

    /// `owner`'s call is over: those refused meanwhile go first.
    mutating func end(_ owner: AnyObject) {
        let id = ObjectIdentifier(owner)
        guard holder == id else { return }
        holder = nil
        asked.remove(id)
        first = asked
        asked.removeAll()
        firstUntil = round + 1
    }

    /// Whether a priority is pending: the loop should run its next round at once, so the
    /// forwards that have it ask (or it lapses) without waiting for another wake-up.
    var hasPriorityPending: Bool { holder == nil && !first.isEmpty }
}

/// What the session driver remembers across sessions for `status`: how many sessions came
/// up, the last one's algorithms and host key, since when it is up, and why the last ended.
struct SessionRecord {
    private(set) var sessions = 0
    private(set) var info: SessionInfo?
    private(set) var connectedSince: Date?
    private(set) var lastError: (end: SessionEnd, at: Date)?
    var stopping = false
    /// The last roaming event's line, for `status`.
    private(set) var lastNetworkEvent: (text: String, at: Date)?

    mutating func roamed(_ text: String) { lastNetworkEvent = (text, Date()) }

    mutating func started(_ info: SessionInfo) {
        sessions += 1
        self.info = info
        connectedSince = Date()
    }

    /// A session ended or an attempt failed, for `end`.
    mutating func failed(_ end: SessionEnd) {
        connectedSince = nil
        lastError = (end, Date())
    }
}
