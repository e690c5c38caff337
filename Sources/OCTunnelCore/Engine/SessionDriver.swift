import Foundation

/// One SSH session to the VPS over its whole life: connecting on a helper thread, running
/// its rounds on the loop, keepalive and dead-session detection, teardown and reconnect with
/// backoff, and a graceful goodbye. What the session is used for is its `SessionForward`s,
/// each driven in turn every round (one session carries them all, as `ssh -L -L -R` does).
///
/// A round: flush what the last one left, read the idle channel (it reads the socket for
/// every channel, so a readable socket never spins), keepalive, the forward's work, free
/// released channels, then one `send()` for everything libssh2 sent meanwhile, and an ACK for
/// what the round read if that send did not carry one. What the driver does when the network
/// may have gone away is in SessionDriverRoaming.swift; what `status` says, SessionDriverStatus.swift.
final class SessionDriver: PollOwner {
    let settings: ConnectionSettings
    private let keepaliveInterval: Double
    private let loop: EventLoop
    let forwards: [SessionForward]
    let emit: @Sendable (EngineEvent) -> Void
    private let scratch = ScratchBuffer()
    let connector = ConnectorThread()
    /// The send buffer's high-water mark (see `LiveSession.highWater`).
    static let highWater = EngineKnobs.sendHighWater

    private(set) var live: LiveSession?
    /// When the next attempt starts, and the roaming under way.
    var reconnect: ReconnectState
    private var socketReady = false
    /// What `status` reports across sessions.
    var record = SessionRecord()
    private var statusServer: StatusServer?
    private let network = NetworkWatcher()
    private var wake = WakeDetector()
    /// The last health test, set from any thread; `status` reports it.
    let health = Locked<StatusSnapshot.Health?>(nil)
    let notifications = Locked<[StatusSnapshot.Notified]>([])

    /// `waitsOutPenalty`: whether a refusal that ends by itself (`OCTunnelError.passesByItself`:
    /// sshd penalizing this address) is waited out even on the very first connection (`tunnel
    /// up`, `home up`; not `tunnel check`, which reports it).
    init(settings: ConnectionSettings, keepalive: Double, exitOnFirstFailure: Bool, waitsOutPenalty: Bool = true, loop: EventLoop,
         forwards: [SessionForward], emit: @escaping @Sendable (EngineEvent) -> Void) {
        self.settings = settings
        self.keepaliveInterval = keepalive
        reconnect = ReconnectState(exitOnFirstFailure: exitOnFirstFailure, waitsOutPenalty: waitsOutPenalty)
        self.loop = loop
        self.forwards = forwards
        self.emit = emit
    }

    /// Runs the loop until a stop request (returns after a graceful goodbye) or a failure
    /// retrying cannot fix (throws): one turn = adopt a connection result, build the poll set,
    /// poll, then one round on the session.
    func run() throws(OCTunnelError) {
        defer { statusServer?.stop() }
        SignalHandling.ignoreSIGPIPE()
        startConnector()
        while true {
            let now = MonotonicClock.now()
            if let asleep = wake.check(now: now, suspended: MonotonicClock.suspended()) { reconnect.notice(.wake(asleep), since: now) }
            if loop.takeReconnectRequest() { reconnect.notice(.requested, since: now) }
            if let result = connector.take() { try connectorFinished(result, now: now) }
            if reconnect.attemptIsDue(now: now, connectorRunning: connector.isRunning) { startConnector() }
            if loop.stopRequested { return shutdownGracefully() }
            loop.pollSet.reset()
            register(in: loop.pollSet, now: now)
            // poll(2) sleeps at most 60 s (PollSet), not at all after `wakeNow` (deadline -∞);
            // back later than that, the process was stopped.
            wake.expect(wakeBy: max(now, min(loop.pollSet.deadline, now + 60)))
            do {
                try loop.poll(now: now)
            } catch {
                throw .sshFailure(host: settings.target.host, port: settings.target.port, detail: error.description)
            }
            drive(now: MonotonicClock.now())
        }
    }

    /// Starts a connection attempt on the connector's thread.
    func startConnector() {
        emit(.connecting(target: settings.target, attempt: reconnect.attemptStarted()))
        let emit = self.emit
        let loop = UncheckedLoop(loop: loop)
        connector.start(settings: settings, onStage: { emit(.stage($0)) }, wake: { loop.loop.wakeUp() })
    }

    /// Adopts a finished connection attempt: a new session (replacing the live one, if any),
    /// or a failure, retried or thrown when retrying cannot fix it.
    private func connectorFinished(_ result: Result<EstablishedSession, OCTunnelError>, now: Double) throws(OCTunnelError) {
        switch result {
        case .success(let established):
            if let old = live {
                // Make-before-break: the new session is up; the old one says goodbye and goes.
                old.session.disconnect(reason: SessionEnd.replaced.text)
                _ = old.session.flushOutgoing()
                drop(old, for: .replaced)
            }
            established.session.startBatching()
            let live = LiveSession(established: established, scratch: scratch, keepaliveInterval: keepaliveInterval,
                                   highWater: Self.highWater, now: now)
            self.live = live
            record.started(established.info)
            emit(.connected(target: settings.target, info: established.info))
            for forward in forwards { forward.sessionStarted(live, now: now) }
            if let event = reconnect.sessionStarted(now: now) { say(event) }
        case .failure(let error):
            switch reconnect.attemptFailed(error, sessionUp: live != nil, now: now) {
            case .keepCurrent:
                // The old session still serves; the replacement is not needed any more.
                record.failed(.attemptFailed(error))
                emit(.warning("reconnect requested, but a new session failed (\(error.localizedDescription)); the current one stays"))
            case .giveUp:
                for forward in forwards { forward.stop(.attemptFailed(error)) }
                throw error
            case .retry(let end, let delay):
                retrying(end, in: delay)
            }
        }
    }

    /// Says why there is no session now and when the next attempt starts.
    private func retrying(_ end: SessionEnd, in delay: Double) {
        record.failed(end)
        emit(.disconnected(reason: end, retryIn: delay))
    }

    /// Adds the SSH socket and the session's timers (and the forward's) to the coming poll.
    private func register(in set: PollSet, now: Double) {
        if let retryAt = reconnect.retryAt { set.wake(at: retryAt) }
        if let live {
            // Bytes waiting for the socket need POLLOUT as well as the usual POLLIN.
            let events = live.session.outgoingBacklog > 0 ? POLLIN | POLLOUT : POLLIN
            set.watch(live.session.socket, events: Int32(events), owner: self, tag: 0)
            set.wake(at: live.keepalive.nextDeadline)
            if live.isFreeingChannels || live.keepalive.isOutstanding { set.wake(at: now + 0.5) }
            // A turn just ended with forwards waiting for it: they ask in the next round, now.
            if live.turn.hasPriorityPending { set.wakeNow() }
        }
        for forward in forwards { forward.register(in: set, live: live, now: now) }
        statusServer?.register(in: set)
        network.register(in: set)
        if reconnect.pending != nil { set.wakeNow() }
    }

    func ready(tag: Int, events: Int16) { socketReady = true }

    /// One round after poll: the session's work and the forward's, or the forward alone
    /// while no session is up.
    private func drive(now: Double) {
        if let burst = network.settled(now: now) {
            reconnect.notice(.networkChange(NetworkWatcher.summary(burst.changes)), since: burst.since)
        }
        guard let live else {
            if let noticed = reconnect.takePending() { roamWithoutSession(noticed, now: now) }
            for forward in forwards { forward.drive(nil, now: now) }
            return
        }
        let session = live.session
        session.newRound()
        live.beginRound()
        defer { socketReady = false }
        if session.outgoingBacklog > 0 && !session.flushOutgoing() {
            return teardown(live, for: .sendFailed(session.outgoingFailure), now: now)
        }
        if socketReady, case .failed(let code) = live.established.idleChannel.read(into: scratch.pointer, count: scratch.size) {
            live.fail(code)
        }
        live.noteInbound(now: now)
        if live.isAlive { roam(live, now: now) }
        if live.isAlive { checkKeepalive(live, now: now) }
        for forward in forwards where live.isAlive { forward.drive(live, now: now) }
        if live.isAlive { live.freeReleasedChannels() }
        if live.isAlive && !session.flushOutgoing() { live.fail(.sendFailed(session.outgoingFailure)) }
        if live.isAlive { session.acknowledgeReceived() }
        if let end = live.failure { teardown(live, for: end, now: now) }
    }

    /// Frees a session that is done, then tells the forward: the session goes first, so
    /// channels dropped after it never touch the dead socket.
    private func drop(_ old: LiveSession, for end: SessionEnd) {
        old.session.close()
        old.dropReleasedChannels()
        live = nil
        for forward in forwards { forward.sessionEnded(end) }
    }

    /// Drops the session after a failure and schedules the next attempt.
    private func teardown(_ live: LiveSession, for end: SessionEnd, now: Double) {
        drop(live, for: end)
        retrying(end, in: reconnect.retry(after: end, uptime: now - live.startedAt, now: now))
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
        if let live {
            live.session.setBlocking(true)
            live.session.setTimeout(milliseconds: 300)
            for forward in forwards { forward.goodbye(live, deadline: deadline) }
            if MonotonicClock.now() < deadline { live.session.disconnect(reason: end.text) }
            live.session.close()
            live.dropReleasedChannels()
        }
        for forward in forwards { forward.stop(end) }
        live = nil
    }

    /// Answers `status` at `endpoint` (the role's and profile's socket) from this loop, for
    /// any forward: a stale socket is replaced, a live one or one not ours is reported.
    func serveStatus(at endpoint: StatusEndpoint) throws(StatusServerError) {
        statusServer = try StatusServer(endpoint: endpoint, source: self)
    }
}

/// The loop, carried to the connector thread only to wake it (its pipe write is thread-safe).
private struct UncheckedLoop: @unchecked Sendable {
    let loop: EventLoop
}
