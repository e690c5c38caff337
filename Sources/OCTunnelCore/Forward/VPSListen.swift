/// `RemoteForward`'s listen on the VPS, across sessions: asked on every new session and again
/// each round while it would block, always with the same bytes. A refusal sshd explains with a
/// policy debug message ends this forward (`fatal`: `listenForbidden`; the run, exit 77, when
/// it was the last one serving). A silent one (the
/// port is busy, usually held by this machine's own dead session) runs the key's forced command
/// (`PortReclaimProgram`, verb `octunnel-reclaim`) on a channel of its own: when it ended a dead
/// session of this user the listen is asked again at once; otherwise (a live holder, another
/// program, an old key line) it is retried with backoff, naming the holder. While listening,
/// the command's heartbeat (`octunnel-beat`) marks the session as the listener's.
final class VPSListen {
    /// The forward whose listen this is, and its place in the session's list (the key's
    /// program names every one but the first by its listen).
    private let forward: Forward
    private let index: Int
    private let options: HomeForwardOptions
    private let emit: @Sendable (EngineEvent) -> Void
    private let forbidden: (any OCTunnelFailure) -> Void
    /// Records a refusal as the forward's last failure, for `status`.
    private let noteFailure: (String) -> Void

    /// The listener once the VPS listens (nil while asking, refused, or between sessions).
    private(set) var listener: (any EngineListener)?
    private var retryAt: Double?
    private var policy = VPSListen.retryPolicy()
    /// The forced command asked after a refused listen; the listen waits for its answer.
    private var reclaim: RemoteCommand?
    /// The forced command's `octunnel-beat` (or `octunnel-mark`, for a key line older than the
    /// heartbeat), kept running while listening: it tells a later `home up` which sshd session
    /// listens, where /proc does not (a non-root VPS user), and with its heartbeat that the
    /// session is alive, where TCP cannot (a relay in front of sshd acknowledges for a dead home).
    private var marker: RemoteCommand?
    /// When the marker's next heartbeat byte is due (`PortReclaimProgram.heartbeatInterval`).
    private var nextBeat = Double.infinity
    /// Whether the authorized_keys line to install was given in full already.
    private var toldKeyLine = false
    /// Listens asked at once after the program found the port free, since the last backoff:
    /// one, so a port the program sees free but sshd cannot bind never spins the loop.
    private var immediateListens = 0
    /// Why this forward stopped (the VPS forbids its listen): `Engine.run` throws it once every forward has one.
    private(set) var fatal: (any OCTunnelFailure)?

    init(
        _ forward: Forward, index: Int, options: HomeForwardOptions, emit: @escaping @Sendable (EngineEvent) -> Void,
        forbidden: @escaping (any OCTunnelFailure) -> Void, noteFailure: @escaping (String) -> Void
    ) {
        self.forward = forward
        self.index = index
        self.options = options
        self.emit = emit
        self.forbidden = forbidden
        self.noteFailure = noteFailure
    }

    /// `verb` for this forward's listen, as the key's program reads it.
    private func verb(_ verb: String) -> String {
        PortReclaimProgram.command(verb, listen: forward.listen, index: index)
    }

    /// Where the VPS listens, as `status` says it: the bound port once listening.
    var listening: HostPort {
        listener.map { HostPort(host: forward.listen.host, port: $0.boundPort) } ?? forward.listen
    }

    /// A refused listen is asked again in the same session: 1 s doubling to 5 s (a listen is
    /// one request on a live session; a dead session's port is taken back at once when the
    /// key's line allows it, else it frees at a moment the VPS chooses).
    static func retryPolicy() -> ReconnectPolicy {
        var policy = ReconnectPolicy()
        policy.maximum = 5
        return policy
    }

    /// The program waits up to about 8 s for a dead connection's evidence and 4 s for the
    /// holder to go; 20 s covers that and a slow VPS.
    static let reclaimTimeout = 20.0

    /// A session has authenticated: collect sshd's debug messages (they explain a refusal)
    /// and ask to listen.
    func sessionStarted(_ live: LiveSession, now: Double) {
        live.session.collectDebugMessages()
        _ = live.session.takeDebugMessages()
        retryAt = nil
        listen(live, now: now)
    }

    /// The listen's wake-up times: its retry, the forced command's deadline, the next heartbeat,
    /// and soon again while an answer is awaited.
    func register(in set: PollSet, now: Double) {
        if let retryAt { set.wake(at: retryAt) }
        if let reclaim { set.wake(at: reclaim.deadline) }
        if marker != nil { set.wake(at: nextBeat) }
        if listener == nil && retryAt == nil { set.wake(at: now + 0.5) }
    }

    /// One round: the forced command and the marker, then the listen again once its retry is due.
    func drive(_ live: LiveSession, now: Double) {
        if let reclaim { stepReclaim(reclaim, live: live, now: now) }
        if let marker { stepMarker(marker, live: live, now: now) }
        if listener == nil, reclaim == nil, let at = retryAt, now >= at { listen(live, now: now) }
    }

    /// Still asking to listen (neither refused nor waiting on the forced command): a reply may
    /// have come in this round.
    func continueAsking(_ live: LiveSession, now: Double) {
        if listener == nil && retryAt == nil && reclaim == nil { listen(live, now: now) }
    }

    /// The session is gone: the next one listens again.
    func sessionEnded() {
        stop()
        retryAt = nil
    }

    /// Cancels the listen on a blocking session (the VPS frees the port at once).
    func goodbye() {
        listener?.cancel()
        listener = nil
    }

    /// Forgets the listen and ends the forced commands.
    func stop() {
        listener = nil
        reclaim?.abandon()
        reclaim = nil
        marker?.abandon()
        marker = nil
        nextBeat = .infinity
    }

    /// One step of asking the VPS to listen; called again each round while it would block.
    private func listen(_ live: LiveSession, now: Double) {
        // Asking (again): no retry time while the answer is awaited, so the loop does not spin on it.
        retryAt = nil
        // The listen's state lives in the session: another forward's listen or open goes first.
        guard live.takeTurn(self) else { return }
        let result = live.session.requestListen(host: forward.listen.host, port: forward.listen.port)
        if case .wouldBlock = result { return }
        live.endTurn(self)
        switch result {
        case .wouldBlock:
            return
        case .listening(let listener):
            self.listener = listener
            retryAt = nil
            policy = Self.retryPolicy()
            immediateListens = 0
            // Marks this session as the listener's for a later reclaim, with a heartbeat (an
            // old key line just ends it).
            let marker = RemoteCommand(command: verb(PortReclaimProgram.beatVerb), deadline: .infinity)
            self.marker = marker
            nextBeat = now
            stepMarker(marker, live: live, now: now)
            emit(
                .listening(
                    listen: HostPort(host: forward.listen.host, port: listener.boundPort), target: forward.target))
        case .refused(let policy?):
            let error = ForwardError.listenForbidden(
                remoteHost: forward.listen.host, remotePort: forward.listen.port, reason: policy,
                listenLine: options.listenLine)
            fatal = error
            noteFailure("the VPS forbids listening on \(forward.listen)")
            forbidden(error)
        case .refused(nil):
            // Ask the key's program what holds the port (and to end it if it is a dead session of ours).
            let command = RemoteCommand(
                command: verb(PortReclaimProgram.reclaimVerb), deadline: now + Self.reclaimTimeout)
            reclaim = command
            stepReclaim(command, live: live, now: now)
        case .failed(let error):
            if LibSSH2Error.isSessionLevel(error.code) {
                live.fail(error.code)
            } else {
                live.fail(.requestFailed(error.description))
            }
        }
    }

    /// One step of the marker: a heartbeat byte when one is due, or, once it ended, the plain
    /// mark when the key's program refused the heartbeat's verb (a line printed before it).
    private func stepMarker(_ command: RemoteCommand, live: LiveSession, now: Double) {
        let state = command.step(live, now: now)
        guard state == .running else {
            marker = nil
            nextBeat = .infinity
            if command.command == verb(PortReclaimProgram.beatVerb), case .finished(let output) = state,
                PortReclaimReport.parse(output)?.result == .refused, live.isAlive
            {
                marker = RemoteCommand(command: verb(PortReclaimProgram.markVerb), deadline: .infinity)
                marker?.step(live, now: now)
            }
            return
        }
        guard command.command == verb(PortReclaimProgram.beatVerb), now >= nextBeat else { return }
        // Not started yet (the exec's answer is a round trip away) or its window full: soon again.
        nextBeat = now + (command.write([0x0A], live: live) ? PortReclaimProgram.heartbeatInterval : 0.25)
    }

    /// One step of the forced command; once it has answered, listen again at once (the port
    /// is free) or retry with backoff, saying what holds the port.
    private func stepReclaim(_ command: RemoteCommand, live: LiveSession, now: Double) {
        let holder: ListenHolder
        switch command.step(live, now: now) {
        case .running:
            return
        case .finished(let output):
            if let report = PortReclaimReport.parse(output) {
                holder = .found(report)
            } else {
                holder = .oldKeyLine(line: toldKeyLine ? nil : options.listenLine)
                toldKeyLine = true
            }
        case .refused(let code):
            // sshd runs a forced command for any exec; a refused channel or request is a limit
            // such as MaxSessions, not an old line.
            holder = .noAnswer(why: "sshd refused its channel, libssh2 error \(code)")
        case .timedOut:
            holder = .noAnswer(why: "no answer within \(Int(Self.reclaimTimeout)) s")
        }
        reclaim = nil
        guard live.isAlive else { return }
        if case .found(let report) = holder, report.portIsFree, immediateListens == 0 {
            immediateListens += 1
            if report.result == .freed { emit(.portTakenBack(listen: forward.listen, report: report)) }
            return listen(live, now: now)
        }
        immediateListens = 0
        let delay = policy.nextDelay(afterUptime: nil)
        retryAt = now + delay
        noteFailure("the VPS refused to listen on \(forward.listen) (the port is busy, or held for a dead session)")
        emit(.listenRefused(listen: forward.listen, retryIn: delay, holder: holder))
    }
}
