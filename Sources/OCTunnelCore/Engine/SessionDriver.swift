#if canImport(Glibc)
import Glibc
#endif

/// One SSH session to the VPS over its whole life: connecting on a helper thread, running
/// its rounds on the loop, keepalive and dead-session detection, teardown and reconnect with
/// backoff, and a graceful goodbye. What the session is used for is its `SessionForward`.
///
/// A round: flush what the last one left, read the idle channel (it reads the socket for
/// every channel, so a readable socket never spins), keepalive, the forward's work, free
/// released channels, then one `send()` for everything libssh2 sent meanwhile, and an ACK for
/// what the round read if that send did not carry one.
final class SessionDriver: PollOwner {
    private let settings: ConnectionSettings
    private let keepaliveInterval: Double
    private let exitOnFirstFailure: Bool
    /// Whether a refusal that ends by itself (`OCTunnelError.passesByItself`: sshd penalizing this
    /// address) is waited out even on the very first connection (`tunnel up`, `home up`; not
    /// `tunnel check`, which reports it).
    private let waitsOutPenalty: Bool
    /// The penalty has been named in full once since the last session; later retries say less.
    private var penaltySaid = false
    private let loop: EventLoop
    private let forward: SessionForward
    private let emit: @Sendable (TunnelEvent) -> Void
    private let scratch = ScratchBuffer()
    private let connector = ConnectorThread()
    /// The send buffer's high-water mark (see `LiveSession.highWater`).
    static let highWater = EngineKnobs.sendHighWater

    private(set) var live: LiveSession?
    private var policy = ReconnectPolicy()
    private var retryAt: Double?
    private var attempts = 0
    private(set) var everConnected = false
    private var socketReady = false
    private var record = SessionRecord()
    private var statusServer: StatusServer?
    private let network = NetworkWatcher()
    private var wake = WakeDetector()
    /// A cause noticed outside a round (a wake, SIGUSR1), acted on in the next one, and since when.
    private var pendingCause: RoamingCause?
    private var pendingSince: Double = 0
    /// The cause being dealt with (a probe or a reconnect under way) and when it was noticed.
    private var roaming: (cause: RoamingCause, since: Double)?
    /// The next teardown starts the next attempt at once (a roaming reconnect).
    private var retryAtOnce = false
    /// A make-before-break reconnect: the next session replaces the live one.
    private var replacing = false
    /// The last health test, set from any thread; `status` reports it.
    let health = HealthRecord()

    init(settings: ConnectionSettings, keepalive: Double, exitOnFirstFailure: Bool, waitsOutPenalty: Bool = true, loop: EventLoop,
         forward: SessionForward, emit: @escaping @Sendable (TunnelEvent) -> Void) {
        self.settings = settings
        self.keepaliveInterval = keepalive
        self.exitOnFirstFailure = exitOnFirstFailure
        self.waitsOutPenalty = waitsOutPenalty
        self.loop = loop
        self.forward = forward
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
            if let asleep = wake.check(now: now, suspended: MonotonicClock.suspended()) { note(.wake(asleep), since: now) }
            if loop.takeReconnectRequest() { note(.requested, since: now) }
            try beginTurn(now: now)
            if loop.stopRequested {
                shutdownGracefully()
                return
            }
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

    private func startConnector() {
        attempts += 1
        emit(.connecting(target: settings.target, attempt: attempts))
        let emit = self.emit
        let loop = UncheckedLoop(loop: loop)
        connector.start(settings: settings, onStage: { emit(.stage($0)) }, wake: { loop.loop.wakeUp() })
    }

    /// The top of a loop turn: adopt a finished connection attempt (throws when the failure is
    /// one retrying cannot fix), and start the next attempt once its backoff has passed.
    private func beginTurn(now: Double) throws(OCTunnelError) {
        if let result = connector.take() { try connectorFinished(result, now: now) }
        if let at = retryAt, now >= at, !connector.isRunning {
            retryAt = nil
            startConnector()
        }
    }

    private func connectorFinished(_ result: Result<EstablishedSession, OCTunnelError>, now: Double) throws(OCTunnelError) {
        switch result {
        case .success(let established):
            if let old = live {
                // Make-before-break: the new session is up; the old one says goodbye and goes.
                old.session.disconnect(reason: SessionEnd.replaced.text)
                _ = old.session.flushOutgoing()
                old.session.close()
                old.dropReleasedChannels()
                self.live = nil
                forward.sessionEnded(.replaced)
            }
            replacing = false
            established.session.startBatching()
            let live = LiveSession(established: established, scratch: scratch, keepaliveInterval: keepaliveInterval,
                                   highWater: Self.highWater, now: now)
            self.live = live
                record.started(established.info)
            emit(.connected(target: settings.target, info: established.info))
            everConnected = true
            penaltySaid = false
            forward.sessionStarted(live, now: now)
            if let roaming {
                self.roaming = nil
                say(.reconnected(roaming.cause, after: now - roaming.since))
            }
        case .failure(let error):
            if replacing && live != nil {
                // The old session still serves; the replacement is not needed any more.
                replacing = false
                roaming = nil
                record.failed(.attemptFailed(error))
                return emit(.warning("reconnect requested, but a new session failed (\(error.localizedDescription)); the current one stays"))
            }
            let waitedOut = error.passesByItself && waitsOutPenalty
            if error.isFatalOnReconnect || (!everConnected && exitOnFirstFailure && !waitedOut) {
                forward.stop(.attemptFailed(error))
                throw error
            }
            // Said in full once; each retry while it lasts says only that it still does.
            let end: SessionEnd = error.passesByItself && penaltySaid ? .stillClosedBeforeGreeting : .attemptFailed(error)
            if error.passesByItself { penaltySaid = true }
            scheduleRetry(end, uptime: nil, now: now)
        }
    }

    private func scheduleRetry(_ end: SessionEnd, uptime: Double?, now: Double) {
        let atOnce = retryAtOnce
        retryAtOnce = false
        let delay = atOnce ? 0 : policy.nextDelay(afterUptime: uptime)
        retryAt = now + delay
        record.failed(end)
        emit(.disconnected(reason: end, retryIn: delay))
    }

    /// Adds the SSH socket and the session's timers (and the forward's) to the coming poll.
    private func register(in set: PollSet, now: Double) {
        if let retryAt { set.wake(at: retryAt) }
        if let live {
            // Bytes waiting for the socket need POLLOUT as well as the usual POLLIN.
            let events = live.session.outgoingBacklog > 0 ? POLLIN | POLLOUT : POLLIN
            set.watch(live.session.socket, events: Int32(events), owner: self, tag: 0)
            set.wake(at: live.keepalive.nextDeadline)
            if live.isFreeingChannels || live.keepalive.isOutstanding { set.wake(at: now + 0.5) }
        }
        forward.register(in: set, live: live, now: now)
        statusServer?.register(in: set)
        network.register(in: set)
        if pendingCause != nil { set.wakeNow() }
    }

    func ready(tag: Int, events: Int16) { socketReady = true }

    /// One round after poll: the session's work and the forward's, or the forward alone
    /// while no session is up.
    private func drive(now: Double) {
        if let burst = network.settled(now: now), pendingCause != .requested {
            note(.networkChange(NetworkWatcher.summary(burst.changes)), since: burst.since)
        }
        guard let live else {
            if let cause = pendingCause { pendingCause = nil; roamWithoutSession(cause, since: pendingSince, now: now) }
            return forward.drive(nil, now: now)
        }
        let session = live.session
        session.newRound()
        defer { socketReady = false }
        if session.outgoingBacklog > 0 && !session.flushOutgoing() {
            return teardown(.sendFailed(session.outgoingFailure), now: now)
        }
        if socketReady {
            if case .failed(let code) = live.established.idleChannel.read(into: scratch.pointer, count: scratch.size) {
                live.fail(code)
            }
        }
        live.noteInbound(now: now)
        if live.isAlive { roam(live, now: now) }
        if live.isAlive {
            switch live.keepalive.check(now: now, channel: live.established.idleChannel) {
            case .alive: break
            case .silent(let seconds): live.fail(.silence(seconds: seconds))
            case .failed(let code): live.fail(code)
            case .answered(let seconds):
                if let roaming, !replacing {
                    self.roaming = nil
                    say(.kept(roaming.cause, answeredIn: seconds))
                }
            case .unanswered(let seconds):
                retryAtOnce = true
                policy.networkChanged()
                live.fail(.unansweredProbe(seconds: seconds, after: roaming?.cause))
            }
        }
        if live.isAlive { forward.drive(live, now: now) }
        if live.isAlive { live.freeReleasedChannels() }
        if live.isAlive && !session.flushOutgoing() {
            live.fail(.sendFailed(session.outgoingFailure))
        }
        if live.isAlive { session.acknowledgeReceived() }
        if let end = live.failure { teardown(end, now: now) }
    }

    private func note(_ cause: RoamingCause, since: Double) {
        pendingCause = cause
        pendingSince = since
    }

    /// Acts on a network change, a wake, a reconnect request, or a client arriving after a
    /// silence: reconnect now (the session's address is gone, or asked to), else a quick probe.
    private func roam(_ live: LiveSession, now: Double) {
        var cause = pendingCause
        var since = pendingSince
        pendingCause = nil
        let arrivals = forward.takeArrivals()
        if cause == nil, arrivals > 0, live.keepalive.isQuiet(now: now), !live.keepalive.isProbing {
            cause = .clientAfterSilence(now - live.keepalive.lastInbound)
            since = now
        }
        guard let cause, !replacing else { return }
        let socket = live.session.socket
        let decision = RoamingDecision.decide(cause, localAddress: InterfaceAddresses.local(of: socket),
                                              addresses: InterfaceAddresses.current(),
                                              roundTrip: InterfaceAddresses.roundTripTime(of: socket), now: now)
        if roaming == nil || cause == .requested { roaming = (cause, since) }
        switch decision {
        case .probe(let deadline):
            live.keepalive.probeNow(now: now, deadline: deadline)
            say(.probing(cause, deadline: deadline - now))
        case .reconnect(let reason):
            policy.networkChanged()
            say(.reconnectingNow(cause, reason: reason.text))
            if cause == .requested && forward.allowsOverlap {
                replacing = true
                if !connector.isRunning { startConnector() }
                return
            }
            if cause == .requested {
                // The VPS frees what the session held (a remote forward's port) at once.
                live.session.disconnect(reason: "reconnecting")
                _ = live.session.flushOutgoing()
            }
            retryAtOnce = true
            live.fail(.roamed(cause, reason))
        }
    }

    /// A network change, a wake or a request while no session is up: the next attempt starts
    /// now, not when the backoff would have let it.
    private func roamWithoutSession(_ cause: RoamingCause, since: Double, now: Double) {
        policy.networkChanged()
        let reason: String
        if connector.isRunning {
            // An attempt that began on the old network may wait out its whole connect timeout
            // on a path that is gone: a new one starts on the new network now.
            guard connector.startedAt < since || cause == .requested else { return }
            connector.abandon()
            reason = "no session; the attempt under way began before, a new one starts now"
        } else {
            guard let at = retryAt, at > now else { return }
            reason = "no session; attempting now"
        }
        if roaming == nil { roaming = (cause, since) }
        retryAt = now
        record.roamed("\(cause.headline): attempting now")
        emit(.roaming(.reconnectingNow(cause, reason: reason)))
    }

    /// Emits a roaming event and keeps its line for `status`.
    private func say(_ event: RoamingEvent) {
        record.roamed(event.text)
        emit(.roaming(event))
    }

    /// Drops the session after a failure: the session is freed first, so channels dropped
    /// after it never touch the dead socket; then the forward drops its streams.
    private func teardown(_ end: SessionEnd, now: Double) {
        guard let live else { return }
        live.session.close()
        live.dropReleasedChannels()
        self.live = nil
        forward.sessionEnded(end)
        scheduleRetry(end, uptime: now - live.startedAt, now: now)
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
            forward.goodbye(live, deadline: deadline)
            if MonotonicClock.now() < deadline { live.session.disconnect(reason: end.text) }
            live.session.close()
            live.dropReleasedChannels()
        }
        forward.stop(end)
        live = nil
    }
}

// MARK: - Status

extension SessionDriver: StatusSource {
    /// Answers `status` at `endpoint` (the role's and profile's socket) from this loop, for
    /// any forward: a stale socket is replaced, a live one or one not ours is reported.
    func serveStatus(at endpoint: StatusEndpoint) throws(StatusServerError) {
        statusServer = try StatusServer(endpoint: endpoint, source: self)
    }

    func statusSnapshot(for endpoint: StatusEndpoint) -> StatusSnapshot {
        let now = MonotonicClock.now()
        let state: StatusSnapshot.State
        if record.stopping { state = .stopping }
        else if live != nil { state = .connected }
        else if connector.isRunning { state = record.sessions > 0 || attempts > 1 ? .retrying : .connecting }
        else if retryAt != nil { state = .disconnected }
        else { state = .connecting }
        var snapshot = StatusSnapshot(role: endpoint.role, profile: endpoint.profile, pid: Int(getpid()), state: state,
                                      target: settings.target)
        if let info = record.info {
            snapshot.hostKey = info.hostKey.fingerprint
            snapshot.hostKeyType = info.hostKey.type
            snapshot.cipher = info.cipher
            snapshot.mac = info.mac
            snapshot.kex = info.keyExchange
        }
        snapshot.connectedSince = live == nil ? nil : record.connectedSince
        if state == .disconnected, let retryAt { snapshot.retryIn = max(0, retryAt - now) }
        snapshot.reconnects = max(0, record.sessions - 1)
        if let error = record.lastError { snapshot.noteError(error.end.text, at: error.at) }
        forward.describe(into: &snapshot)
        snapshot.health = health.value
        if let event = record.lastNetworkEvent {
            snapshot.lastNetworkEvent = event.text
            snapshot.lastNetworkEventAt = event.at
        }
        return snapshot
    }
}

/// The loop, carried to the connector thread only to wake it (its pipe write is thread-safe).
private struct UncheckedLoop: @unchecked Sendable {
    let loop: EventLoop
}
