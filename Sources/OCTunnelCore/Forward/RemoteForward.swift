import Foundation

/// The home side (`ssh -R`): asks the VPS to listen on `remoteHost:remotePort`, accepts each
/// `forwarded-tcpip` channel it opens, connects it to `homeHost:homePort` (non-blocking, with a
/// timeout) and joins the two with a `ForwardedStream`, the same pump as the laptop side. A channel
/// the home port cannot take is answered with a `HomeGatewayAnswer` (HTTP 502), since libssh2
/// has already confirmed it.
///
/// The listen is asked again on every new session, and a refusal dealt with, by `VPSListen`.
final class RemoteForward: SessionForward, PollOwner {
    /// This forward: where the VPS listens, and where at home its connections go.
    let forward: Forward
    private let options: HomeForwardOptions
    private let emit: @Sendable (EngineEvent) -> Void
    /// Where its connections go here (`forward.target`, or where OpenCode's service moved since) and its addresses.
    private var home: HostPort
    private var homeAddresses: [(family: Int32, address: Data)]
    private let follower: ServiceFollower?
    private let listen: VPSListen

    private let streams: StreamTable
    private var connecting: [Int: HomeConnection] = [:]
    private var answering: [Int: GatewayReply] = [:]
    private var awaitingService: [Int: AwaitingService] = [:]
    private var connected = Set<Int>()
    private var lastUnreachable: Double = -100

    /// A forwarded channel whose home socket is still connecting.
    private struct HomeConnection {
        let socket: OwnedDescriptor
        let channel: any EngineChannel
        let deadline: Double
        var nextAddress: Int
        /// The home address it was started for: the service may have moved meanwhile.
        let home: HostPort
    }

    /// A forwarded channel the home address refused, waiting for the service's files to be read
    /// again (off the loop, `ServiceFollower`): moved, it tries the new address; else a 502.
    private struct AwaitingService {
        let channel: any EngineChannel
        let deadline: Double
        /// The read that must be done first (started after the failure), and the address then.
        let read: Int
        let home: HostPort
        let reason: String
    }

    /// A forwarded channel answered with a 502: its request is read and dropped until the
    /// client closes (closing first could reset the VPS's socket before the answer is read).
    private struct GatewayReply {
        let channel: any EngineChannel
        let deadline: Double
    }

    /// Resolves the home address now, so a bad --home-host fails before any network work.
    /// `forward` is the `index`th of `options.forwards` (the rest of `options` is shared); only
    /// OpenCode's follows its service (`options.followService`). `forbidden` is called (on the
    /// loop) when the VPS forbids this forward's listen. `wake` wakes the loop from another
    /// thread (the service follower's reads).
    init(
        _ forward: Forward, index: Int, options: HomeForwardOptions, emit: @escaping @Sendable (EngineEvent) -> Void,
        forbidden: @escaping (any OCTunnelFailure) -> Void, wake: @escaping @Sendable () -> Void
    ) throws {
        self.forward = forward
        self.options = options
        self.emit = emit
        let streams = StreamTable(emit: emit)
        self.streams = streams
        listen = VPSListen(
            forward, index: index, options: options, emit: emit, forbidden: forbidden,
            noteFailure: { streams.noteFailure($0) })
        home = forward.target
        homeAddresses = try SocketFailure.thrownAsFailure { () throws(SocketFailure) in
            try Sockets.resolve(host: forward.target.host, port: forward.target.port)
        }
        follower =
            options.followService && forward.isOpenCode
            ? ServiceFollower(current: forward.target, allowedHost: forward.target.host, wake: wake) : nil
    }

    /// OpenCode 2's service moved (a read of its files, off the loop, found another address):
    /// connections go there from now on. Asks for the next read when one is due. Returns
    /// whether it moved.
    @discardableResult
    private func followService(now: Double) -> Bool {
        guard let move = follower?.moved(now: now) else { return false }
        let service = move.service
        let from = home
        home = service.address
        homeAddresses = move.addresses
        emit(
            .openCodeHome(
                home: home,
                detail: OutsideText.shown(
                    "OpenCode 2's background service moved from \(from) "
                        + "to \(home) (\(service.registration ?? "its settings")): forwarding there")))
        return true
    }

    /// Why this forward stopped (the VPS forbids its listen): `Engine.run` throws it once every forward has one.
    var fatal: (any OCTunnelFailure)? { listen.fatal }

    // MARK: - SessionForward

    /// The old session holds the VPS port: a new one could not listen beside it.
    var allowsOverlap: Bool { false }

    func sessionStarted(_ live: LiveSession, now: Double) {
        listen.sessionStarted(live, now: now)
    }

    func register(in set: PollSet, live: LiveSession?, now: Double) {
        guard let live else { return }
        listen.register(in: set, now: now)
        for (id, connection) in connecting {
            set.watch(connection.socket, events: .writable, owner: self, tag: id)
            set.wake(at: connection.deadline)
        }
        for waiting in awaitingService.values { set.wake(at: waiting.deadline) }
        if !answering.isEmpty { set.wake(at: now + 0.5) }
        streams.register(in: set, owner: self)
    }

    func ready(tag: Int, events: PollEvents) {
        if connecting[tag] != nil { connected.insert(tag) } else { streams.socketReady(tag) }
    }

    func drive(_ live: LiveSession?, now: Double) {
        defer { connected.removeAll(keepingCapacity: true) }
        guard let live else { return }
        listen.drive(live, now: now)
        guard live.isAlive, listen.fatal == nil else { return }
        acceptChannels(live, now: now)
        guard live.isAlive else { return }
        finishConnecting(live, now: now)
        guard live.isAlive else { return }
        finishAwaitingService(live, now: now)
        drainReplies(live, now: now)
        guard live.isAlive else { return }
        streams.pumpAll(live, now: now)
    }

    func sessionLost(_ live: LiveSession, _ end: SessionEnd) {
        listen.sessionEnded()
        streams.sessionEnded(only: live)
        for connection in connecting.values { connection.socket.close() }
        connecting.removeAll()
        answering.removeAll()
        awaitingService.removeAll()
    }

    func goodbye(_ live: LiveSession, deadline: Double) {
        // Cancel first: the VPS frees the port at once, even if the rest runs out of time.
        listen.goodbye()
        streams.sendFinalEOFs(of: live, deadline: deadline)
    }

    func stop(_ end: SessionEnd) {
        listen.stop()
        streams.stop(reason: end.connectionNotice)
        for connection in connecting.values { connection.socket.close() }
        connecting.removeAll()
        answering.removeAll()
        awaitingService.removeAll()
    }

    /// For `home status`: the forward as the VPS listens for it now, to where it goes now.
    func describe(into snapshot: inout StatusSnapshot) {
        var running = forward
        running.listen = listen.listening
        running.target = home
        streams.describe(into: &snapshot, forward: running, alsoOpen: settingUp)
    }

    // MARK: - Forwarded connections

    /// Connections not (or no longer) streams: home sockets still connecting, 502s being answered.
    private var settingUp: Int { connecting.count + answering.count + awaitingService.count }

    /// Takes every channel the VPS has opened and starts connecting each to the home port.
    private func acceptChannels(_ live: LiveSession, now: Double) {
        guard let listener = listen.listener else { return listen.continueAsking(live, now: now) }
        while streams.hasRoom(besides: settingUp) {
            switch listener.accept() {
            case .none: return
            case .failed(let code): return live.fail(code)
            case .accepted(let channel):
                let id = streams.newID()
                emit(.clientOpened(id: id, peer: "VPS \(forward.listen)"))
                followService(now: now)
                startConnecting(
                    id: id, channel: channel, from: 0, deadline: now + options.homeConnectTimeout, live: live, now: now)
            }
        }
    }

    /// A non-blocking connect to the home port's address `index` (then the next, on failure).
    private func startConnecting(
        id: Int, channel: any EngineChannel, from index: Int, deadline: Double, live: LiveSession, now: Double
    ) {
        var failure = Errno.connectionRefused
        for position in index..<homeAddresses.count {
            let (family, address) = homeAddresses[position]
            switch Sockets.startConnect(family: family, address: address) {
            case .connected(let socket):
                return join(id: id, socket: socket, channel: channel, live: live, now: now)
            case .inProgress(let socket):
                connecting[id] = HomeConnection(
                    socket: socket, channel: channel, deadline: deadline, nextAddress: position + 1,
                    home: home)
                return
            case .failed(let code):
                failure = code
            }
        }
        noAddressLeft(
            id: id, channel: channel, deadline: deadline, reason: Self.describe(failure), live: live, now: now)
    }

    /// Every address of the home refused `channel`'s connection: with the service followed, it
    /// waits for the files to be read again (off the loop) and tries where they say; else a 502.
    private func noAddressLeft(
        id: Int, channel: any EngineChannel, deadline: Double, reason: String, live: LiveSession, now: Double
    ) {
        guard let follower else {
            return homeUnreachable(id: id, channel: channel, reason: reason, live: live, now: now)
        }
        let read = follower.ask(now: now, force: true)
        awaitingService[id] = AwaitingService(
            channel: channel, deadline: deadline, read: read, home: home, reason: reason)
    }

    /// Connections that waited for the service's files: moved, each tries the new address;
    /// read and not moved (or out of time), each is answered with a 502.
    private func finishAwaitingService(_ live: LiveSession, now: Double) {
        guard !awaitingService.isEmpty, let follower else { return }
        followService(now: now)
        for (id, waiting) in awaitingService {
            if waiting.home != home {
                awaitingService[id] = nil
                startConnecting(
                    id: id, channel: waiting.channel, from: 0, deadline: waiting.deadline, live: live, now: now)
            } else if follower.isDone(waiting.read) || now >= waiting.deadline {
                awaitingService[id] = nil
                homeUnreachable(id: id, channel: waiting.channel, reason: waiting.reason, live: live, now: now)
            }
            guard live.isAlive else { return }
        }
    }

    /// Connections that finished connecting (or ran out of time) become streams or 502s.
    private func finishConnecting(_ live: LiveSession, now: Double) {
        for (id, connection) in connecting {
            if connected.contains(id) {
                let failure = connection.socket.pendingError
                connecting[id] = nil
                if let failure {
                    connection.socket.close()
                    if connection.home != home {
                        // Started for the address the service had before it moved (another
                        // connection's failure moved it meanwhile): try where it is now.
                        startConnecting(
                            id: id, channel: connection.channel, from: 0, deadline: connection.deadline, live: live,
                            now: now)
                    } else if connection.nextAddress < homeAddresses.count {
                        startConnecting(
                            id: id, channel: connection.channel, from: connection.nextAddress,
                            deadline: connection.deadline, live: live, now: now)
                    } else {
                        noAddressLeft(
                            id: id, channel: connection.channel, deadline: connection.deadline,
                            reason: Self.describe(failure),
                            live: live, now: now)
                    }
                } else {
                    join(id: id, socket: connection.socket, channel: connection.channel, live: live, now: now)
                }
            } else if now >= connection.deadline {
                connecting[id] = nil
                connection.socket.close()
                homeUnreachable(
                    id: id, channel: connection.channel,
                    reason: "no answer within \(Int(options.homeConnectTimeout)) s", live: live, now: now)
            }
        }
    }

    private func join(id: Int, socket: OwnedDescriptor, channel: any EngineChannel, live: LiveSession, now: Double) {
        let stream = ForwardedStream(id: id, socket: socket, now: now)
        stream.attach(channel, on: live)
        streams.add(stream)
    }

    /// Says why (at most once every 5 s) and answers the channel with a 502, or just closes it
    /// with `--no-http-errors`.
    private func homeUnreachable(id: Int, channel: any EngineChannel, reason: String, live: LiveSession, now: Double) {
        streams.noteFailure("home \(home): \(reason)")
        if now - lastUnreachable >= 5 {
            lastUnreachable = now
            emit(.homeUnreachable(target: home, reason: reason, openCode: forward.isOpenCode))
        }
        emit(.clientDropped(id: id, reason: "home \(home): \(reason)"))
        if options.httpErrors {
            let response = HomeGatewayAnswer.unreachable(home: home, reason: reason, openCode: forward.isOpenCode)
                .response
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

    private static func describe(_ failure: Errno) -> String {
        failure == .connectionRefused ? "connection refused" : failure.description.lowercased()
    }
}
