import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The home side (`ssh -R`): asks the VPS to listen on `remoteHost:remotePort`, accepts each
/// `forwarded-tcpip` channel it opens, connects it to `homeHost:homePort` (non-blocking, with a
/// timeout) and joins the two with a `Stream`, the same pump as the laptop side. A channel
/// the home port cannot take is answered with a `HomeGatewayAnswer` (HTTP 502), since libssh2
/// has already confirmed it.
///
/// The listen is asked again on every new session. A refusal sshd explains with a policy
/// debug message ends the run (`listenForbidden`, exit 77). A silent one (the port is busy,
/// usually held by this machine's own dead session) runs the key's forced command
/// (`PortReclaimProgram`, verb `octunnel-reclaim`) on a channel of its own: when it ended a
/// dead session of this user the listen is asked again at once; otherwise (a live holder,
/// another program, an old key line) it is retried with backoff, naming the holder.
final class RemoteForward: SessionForward, PollOwner {
    private let options: HomeForwardOptions
    private let emit: @Sendable (TunnelEvent) -> Void
    private let requestStop: () -> Void
    private let homeAddresses: [(family: Int32, address: Data)]

    private var listener: RemoteListener?
    private var listenRetryAt: Double?
    private var listenPolicy = RemoteForward.listenRetryPolicy()
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
    /// Why the run must end (the VPS forbids listening): `HomeEngine.run` throws it.
    private(set) var fatal: OCTunnelError?

    private let streams: StreamTable
    private var connecting: [Int: HomeConnection] = [:]
    private var answering: [Int: GatewayReply] = [:]
    private var connected = Set<Int>()
    private var lastUnreachable: Double = -100

    /// A forwarded channel whose home socket is still connecting.
    private struct HomeConnection {
        let socket: OwnedDescriptor
        let channel: SSHChannel
        let deadline: Double
        var nextAddress: Int
    }

    /// A forwarded channel answered with a 502: its request is read and dropped until the
    /// client closes (closing first could reset the VPS's socket before the answer is read).
    private struct GatewayReply {
        let channel: SSHChannel
        let deadline: Double
    }

    /// Resolves the home address now, so a bad --home-host fails before any network work.
    init(options: HomeForwardOptions, emit: @escaping @Sendable (TunnelEvent) -> Void,
         requestStop: @escaping () -> Void) throws(OCTunnelError) {
        self.options = options
        self.emit = emit
        self.requestStop = requestStop
        streams = StreamTable(emit: emit)
        homeAddresses = try Sockets.resolve(host: options.home.host, port: options.home.port)
    }

    private var remote: HostPort { options.remote }

    /// A refused listen is asked again in the same session: 1 s doubling to 5 s (a listen is
    /// one request on a live session; a dead session's port is taken back at once when the
    /// key's line allows it, else it frees at a moment the VPS chooses).
    static func listenRetryPolicy() -> ReconnectPolicy {
        var policy = ReconnectPolicy()
        policy.maximum = 5
        return policy
    }

    // MARK: - SessionForward

    /// The old session holds the VPS port: a new one could not listen beside it.
    var allowsOverlap: Bool { false }

    func sessionStarted(_ live: LiveSession, now: Double) {
        live.session.collectDebugMessages()
        _ = live.session.takeDebugMessages()
        listenRetryAt = nil
        listen(live, now: now)
    }

    func register(in set: PollSet, live: LiveSession?, now: Double) {
        guard let live else { return }
        if let listenRetryAt { set.wake(at: listenRetryAt) }
        if let reclaim { set.wake(at: reclaim.deadline) }
        if marker != nil { set.wake(at: nextBeat) }
        if listener == nil && listenRetryAt == nil { set.wake(at: now + 0.5) }
        for (id, connection) in connecting {
            set.watch(connection.socket.number, events: Int32(POLLOUT), owner: self, tag: id)
            set.wake(at: connection.deadline)
        }
        if !answering.isEmpty { set.wake(at: now + 0.5) }
        streams.register(in: set, live: live, owner: self)
    }

    func ready(tag: Int, events: Int16) {
        if connecting[tag] != nil { connected.insert(tag) } else { streams.socketReady(tag) }
    }

    func drive(_ live: LiveSession?, now: Double) {
        defer { connected.removeAll(keepingCapacity: true) }
        guard let live else { return }
        if let reclaim { stepReclaim(reclaim, live: live, now: now) }
        if let marker { stepMarker(marker, live: live, now: now) }
        if listener == nil, reclaim == nil, let at = listenRetryAt, now >= at { listen(live, now: now) }
        guard live.isAlive, fatal == nil else { return }
        acceptChannels(live, now: now)
        guard live.isAlive else { return }
        finishConnecting(live, now: now)
        drainReplies(live, now: now)
        guard live.isAlive else { return }
        streams.pumpAll(live, now: now)
    }

    func sessionEnded(reason: String) {
        listener = nil
        listenRetryAt = nil
        reclaim?.abandon()
        reclaim = nil
        marker?.abandon()
        marker = nil
        nextBeat = .infinity
        streams.sessionEnded()
        for connection in connecting.values { connection.socket.close() }
        connecting.removeAll()
        answering.removeAll()
    }

    func goodbye(_ live: LiveSession, deadline: Double) {
        // Cancel first: the VPS frees the port at once, even if the rest runs out of time.
        listener?.cancel()
        listener = nil
        streams.sendFinalEOFs(deadline: deadline)
    }

    func stop(reason: String?) {
        listener = nil
        reclaim?.abandon()
        reclaim = nil
        marker?.abandon()
        marker = nil
        nextBeat = .infinity
        streams.stop(reason: reason)
        for connection in connecting.values { connection.socket.close() }
        connecting.removeAll()
        answering.removeAll()
    }

    // MARK: - The listen

    /// One step of asking the VPS to listen; called again each round while it would block.
    private func listen(_ live: LiveSession, now: Double) {
        // Asking (again): no retry time while the answer is awaited, so the loop does not spin on it.
        listenRetryAt = nil
        switch live.session.listen(host: remote.host, port: remote.port) {
        case .wouldBlock:
            return
        case .listening(let listener):
            self.listener = listener
            listenRetryAt = nil
            listenPolicy = Self.listenRetryPolicy()
            immediateListens = 0
            // Marks this session as the listener's for a later reclaim, with a heartbeat (an
            // old key line just ends it).
            let marker = RemoteCommand(command: PortReclaimProgram.beatVerb, deadline: .infinity)
            self.marker = marker
            nextBeat = now
            stepMarker(marker, live: live, now: now)
            emit(.listening(remote: HostPort(host: remote.host, port: listener.boundPort), home: options.home))
        case .refused(let policy?):
            fatal = .listenForbidden(remoteHost: remote.host, remotePort: remote.port, reason: policy, listenLine: options.listenLine)
            requestStop()
        case .refused(nil):
            // Ask the key's program what holds the port (and to end it if it is a dead session of ours).
            let command = RemoteCommand(command: PortReclaimProgram.reclaimVerb, deadline: now + Self.reclaimTimeout)
            reclaim = command
            stepReclaim(command, live: live, now: now)
        case .failed(let error):
            if LibSSH2Error.isSessionLevel(error.code) { live.fail(error.code) } else { live.fail(reason: error.description) }
        }
    }

    /// One step of the marker: a heartbeat byte when one is due, or, once it ended, the plain
    /// mark when the key's program refused the heartbeat's verb (a line printed before it).
    private func stepMarker(_ command: RemoteCommand, live: LiveSession, now: Double) {
        let state = command.step(live, now: now)
        guard state == .running else {
            marker = nil
            nextBeat = .infinity
            if command.command == PortReclaimProgram.beatVerb, case .finished(let output) = state,
               PortReclaimReport.parse(output)?.result == .refused, live.isAlive {
                marker = RemoteCommand(command: PortReclaimProgram.markVerb, deadline: .infinity)
                marker?.step(live, now: now)
            }
            return
        }
        guard command.command == PortReclaimProgram.beatVerb, now >= nextBeat else { return }
        // Not started yet (the exec's answer is a round trip away) or its window full: soon again.
        nextBeat = now + (command.write([0x0A], live: live) ? PortReclaimProgram.heartbeatInterval : 0.25)
    }

    /// The program waits up to about 8 s for a dead connection's evidence and 4 s for the
    /// holder to go; 20 s covers that and a slow VPS.
    static let reclaimTimeout = 20.0

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
            if report.result == .freed { emit(.portTakenBack(remote: remote, report: report)) }
            return listen(live, now: now)
        }
        immediateListens = 0
        let delay = listenPolicy.nextDelay(afterUptime: nil)
        listenRetryAt = now + delay
        streams.noteFailure("the VPS refused to listen on \(remote) (the port is busy, or held for a dead session)")
        emit(.listenRefused(remote: remote, retryIn: delay, holder: holder))
    }

    /// For `home status`: the home port as `local`, the VPS listen as `remote`.
    func describe(into snapshot: inout StatusSnapshot) {
        streams.describe(into: &snapshot, local: options.home,
                         remote: listener.map { HostPort(host: remote.host, port: $0.boundPort) } ?? remote, alsoOpen: settingUp)
    }

    // MARK: - Forwarded connections

    /// Connections not (or no longer) streams: home sockets still connecting, 502s being answered.
    private var settingUp: Int { connecting.count + answering.count }

    /// Takes every channel the VPS has opened and starts connecting each to the home port.
    private func acceptChannels(_ live: LiveSession, now: Double) {
        guard let listener else {
            // Still asking to listen: a reply may have come in this round.
            if listenRetryAt == nil && reclaim == nil { listen(live, now: now) }
            return
        }
        while streams.hasRoom(besides: settingUp) {
            switch listener.accept() {
            case .none: return
            case .failed(let code): return live.fail(code)
            case .accepted(let channel):
                let id = streams.newID()
                emit(.clientOpened(id: id, peer: "VPS \(remote)"))
                startConnecting(id: id, channel: channel, from: 0, deadline: now + options.homeConnectTimeout, live: live, now: now)
            }
        }
    }

    /// A non-blocking connect to the home port's address `index` (then the next, on failure).
    private func startConnecting(id: Int, channel: SSHChannel, from index: Int, deadline: Double, live: LiveSession, now: Double) {
        var failure = ECONNREFUSED
        for position in index..<homeAddresses.count {
            let (family, address) = homeAddresses[position]
            let fd = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd < 0 { failure = errno; continue }
            let socket = OwnedDescriptor(fd)
            let rc = address.withUnsafeBytes { Glibc.connect(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count)) }
            if rc == 0 {
                return join(id: id, socket: socket, channel: channel, now: now)
            }
            if errno == EINPROGRESS || errno == EINTR {
                connecting[id] = HomeConnection(socket: socket, channel: channel, deadline: deadline, nextAddress: position + 1)
                return
            }
            failure = errno
            socket.close()
        }
        homeUnreachable(id: id, channel: channel, reason: Self.describe(failure), live: live, now: now)
    }

    /// Connections that finished connecting (or ran out of time) become streams or 502s.
    private func finishConnecting(_ live: LiveSession, now: Double) {
        for (id, connection) in connecting {
            if connected.contains(id) {
                var value: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(connection.socket.number, SOL_SOCKET, SO_ERROR, &value, &length)
                connecting[id] = nil
                if value == 0 {
                    join(id: id, socket: connection.socket, channel: connection.channel, now: now)
                } else {
                    connection.socket.close()
                    if connection.nextAddress < homeAddresses.count {
                        startConnecting(id: id, channel: connection.channel, from: connection.nextAddress,
                                        deadline: connection.deadline, live: live, now: now)
                    } else {
                        homeUnreachable(id: id, channel: connection.channel, reason: Self.describe(value), live: live, now: now)
                    }
                }
            } else if now >= connection.deadline {
                connecting[id] = nil
                connection.socket.close()
                homeUnreachable(id: id, channel: connection.channel,
                                reason: "no answer within \(Int(options.homeConnectTimeout)) s", live: live, now: now)
            }
        }
    }

    private func join(id: Int, socket: OwnedDescriptor, channel: SSHChannel, now: Double) {
        let stream = Stream(id: id, socket: socket, now: now)
        stream.attach(channel)
        streams.add(stream)
    }

    /// Says why (at most once every 5 s) and answers the channel with a 502, or just closes it
    /// with `--no-http-errors`.
    private func homeUnreachable(id: Int, channel: SSHChannel, reason: String, live: LiveSession, now: Double) {
        streams.noteFailure("home \(options.home): \(reason)")
        if now - lastUnreachable >= 5 {
            lastUnreachable = now
            emit(.homeUnreachable(home: options.home, reason: reason))
        }
        emit(.clientDropped(id: id, reason: "home \(options.home): \(reason)"))
        if options.httpErrors {
            let response = HomeGatewayAnswer.unreachable(home: options.home, reason: reason).response
            let result = response.withUnsafeBytes { channel.write($0.baseAddress!, count: $0.count) }
            if case .failed(let code) = result, LibSSH2Error.isSessionLevel(code) { return live.fail(code) }
        }
        if case .failed(let code) = channel.sendEOF(), LibSSH2Error.isSessionLevel(code) { return live.fail(code) }
        answering[id] = GatewayReply(channel: channel, deadline: now + 5)
    }

    /// Reads and drops what answered channels receive until their client closes, then frees them.
    private func drainReplies(_ live: LiveSession, now: Double) {
        for (id, reply) in answering {
            var done = now >= reply.deadline
            while !done {
                switch reply.channel.read(into: live.scratch.pointer, count: live.scratch.size) {
                case .bytes: continue
                case .wouldBlock: break
                case .eof: done = true
                case .failed(let code):
                    if LibSSH2Error.isSessionLevel(code) { return live.fail(code) }
                    done = true
                }
                break
            }
            if done {
                answering[id] = nil
                live.release(reply.channel)
            }
        }
    }

    private static func describe(_ code: Int32) -> String {
        code == ECONNREFUSED ? "connection refused" : String(cString: strerror(code)).lowercased()
    }
}
