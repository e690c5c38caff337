import Foundation

// The laptop side's forward: the listener, its clients, the channels they get, opened when
// asked or ahead of need (`ChannelPool`, in ChannelPool.swift; its size and pacing are PoolDemand and OpenBackoff).

/// The laptop side (`ssh -L`): a local listener whose every client gets a `direct-tcpip`
/// channel to the forward's target as the VPS sees it, joined to the client by a `ForwardedStream`.
///
/// Only one open can be in flight per libssh2 session (its state lives in the session,
/// channel.c:144; the session's forwards take turns, `LiveSession.takeTurn`), so
/// channels are opened ahead of need (`ChannelPool`): a new client takes a
/// pooled channel at once and the pool refills behind it. Without one, clients wait in
/// arrival order for the next open (all opens go to the same target, so whichever completes
/// serves the next client, or the pool); `takeNextWaiting` lets one that has already sent its
/// request go before quiet ones. Clients that come while no session is up wait up to the
/// connect timeout.
final class LocalForward: SessionForward, PollOwner {
    private let options: TunnelOptions
    /// This forward: where it listens, and where on the VPS its channels go.
    let forward: Forward
    private let emit: @Sendable (EngineEvent) -> Void
    /// Every listening socket: the forward's address, then ::1 on the same port when asked and
    /// present, then those added while running (`alsoListen`). It and `listenerClosed` are
    /// written under `addedLock`; the loop reads the array as it is (no copy per round).
    private var allListeners: [OwnedDescriptor]
    /// The ports added while running.
    private var addedPorts = Set<Int>()
    private let addedLock = NSLock()
    /// The port actually listened on (useful with --local-port 0).
    let listenPort: Int
    /// The addresses listened on beside the forward's own (::1), all on `listenPort`.
    let alsoLocal: [HostPort]
    private var listenerClosed = false

    private let streams: StreamTable
    private var waiting: [Int] = []
    /// Per session (the driver's, and a burst's extra one): the originator address of the open
    /// in flight, which must be repeated byte for byte (absent: none in flight).
    private var opening: [ObjectIdentifier: (host: String, port: Int)] = [:]
    let pool: ChannelPool
    /// Per session: its received-byte count when the pool was last tended on it.
    private var receivedAtLastTend: [ObjectIdentifier: Int] = [:]
    /// A burst's extra session, while one is up (`BurstSession`): it opens channels for waiting
    /// clients beside the driver's; the streams it opens stay on it.
    private(set) var extra: LiveSession?
    /// When a client last waited for a channel: the pool's shortfall counts as queue within
    /// `BurstRule.poolHelp` of it.
    private var lastQueued = -Double.infinity
    /// When the queue was last long (`BurstRule.queueWorthASession`, a burst): the extra session
    /// keeps pooled channels for `BurstRule.poolHelp` after it, then hands them back.
    private var lastLong = -Double.infinity
    /// Clients that waited while the queue was long: the only ones the extra session serves, so a
    /// client that comes after the burst (an event stream that lives for hours) never pins it.
    private var burstClients = Set<Int>()
    /// Local ports of this process's own long streams (`tunnel up`'s event follower): never on the
    /// extra session, and moved off it if one got there (`keepOffExtra`). Written from any thread.
    private let ownPorts = Locked<Set<Int>>([])
    /// The driver's session is down (it died while the extra lives): the extra serves every client.
    private var driverDown = false
    private var announced = false
    private var lastNothingListening: Double = -100
    private let refusalLock = NSLock()
    private var refusal: String?
    private var arrivals = 0

    /// Binds the listener now, so a busy port fails before anything else happens. `forward`
    /// is one of `options.forwards` (OpenCode's by default); the rest of `options` is shared.
    init(options: TunnelOptions, forward: Forward, emit: @escaping @Sendable (EngineEvent) -> Void) throws {
        self.options = options
        self.forward = forward
        self.emit = emit
        streams = StreamTable(emit: emit)
        pool = ChannelPool(fixedSize: options.warm)
        let (first, port) = try SocketFailure.thrownAsFailure { () throws(SocketFailure) in
            try Sockets.listen(bind: forward.listen.host, port: forward.listen.port)
        }
        listenPort = port
        var listeners = [first]
        var alsoLocal: [HostPort] = []
        // IPv4 first, then ::1 on the port it got (--local-port 0 included), as `ssh -L` does.
        if options.alsoIPv6Loopback && forward.listen.host == Defaults.bind {
            do {
                listeners.append(try Sockets.listen(bind: "::1", port: port).socket)
                alsoLocal.append(HostPort(host: "::1", port: port))
            } catch .portInUse {
                emit(
                    .warning(
                        "[::1]:\(port) is in use by another program; clients that reach "
                            + "this machine's localhost as ::1 get that program, not the tunnel (127.0.0.1:\(port) works)"
                    ))
            } catch {
                // No IPv6 loopback on this machine (disabled, or no IPv6 at all): 127.0.0.1 serves alone.
            }
        }
        allListeners = listeners
        self.alsoLocal = alsoLocal
    }

    /// Every listening socket (`allListeners`), read under the lock `alsoListen` writes it under.
    private var listeners: [OwnedDescriptor] {
        addedLock.lock(); defer { addedLock.unlock() }
        return allListeners
    }

    /// What `alsoListen` did.
    enum AlsoListen: Sendable, Equatable {
        /// Listening there now (and on ::1 when the forward is).
        case listening([HostPort])
        /// Already listening there (the forward's own port, or added before).
        case already
        /// Another program has it, or it cannot be listened on: why.
        case unavailable(String)
    }

    /// Listens on `port` too, on the forward's loopback address (and ::1 beside it when the
    /// forward does), for clients that name that port: a second listener of the same forward,
    /// whose clients go where the forward's go. Safe from any thread; the loop takes the new
    /// sockets up at its next round (the caller wakes it).
    func alsoListen(port: Int) -> AlsoListen {
        addedLock.lock(); defer { addedLock.unlock() }
        guard port != listenPort, !addedPorts.contains(port) else { return .already }
        guard !listenerClosed else { return .unavailable("the tunnel is stopping") }
        var added: [OwnedDescriptor] = []
        var addresses: [HostPort] = []
        do throws(SocketFailure) {
            added.append(try Sockets.listen(bind: forward.listen.host, port: port).socket)
            addresses.append(HostPort(host: forward.listen.host, port: port))
        } catch .portInUse {
            return .unavailable("in use by another program here")
        } catch {
            return .unavailable(error.failure.localizedDescription)
        }
        for also in alsoLocal {
            if let socket = try? Sockets.listen(bind: also.host, port: port).socket {
                added.append(socket)
                addresses.append(HostPort(host: also.host, port: port))
            }
        }
        addedPorts.insert(port)
        allListeners += added
        return .listening(addresses)
    }

    /// Why the VPS last refused a forward, if it has; safe from any thread.
    var lastForwardRefusal: String? {
        refusalLock.lock(); defer { refusalLock.unlock() }
        return refusal
    }

    // MARK: - SessionForward

    func sessionStarted(_ live: LiveSession, now: Double) {
        pool.sessionStarted(now: now)
        if !announced {
            emit(
                .forwarding(
                    listen: HostPort(host: forward.listen.host, port: listenPort), target: forward.target,
                    alsoListening: alsoLocal,
                    openCode: forward.isOpenCode))
            announced = true
        }
    }

    func register(in set: PollSet, live: LiveSession?, now: Double) {
        if !listenerClosed && streams.hasRoom() {
            for listener in listeners { set.watch(listener, events: .readable, owner: self, tag: -1) }
        }
        if live == nil, let first = waiting.first, let stream = streams[first] {
            set.wake(at: stream.createdAt + options.connection.connectTimeout)
        }
        guard live != nil || extra != nil else { return }
        for session in [live, extra] { if let session { registerOpens(in: set, session, now: now) } }
        if let at = pool.nextOpenTime(now: now) { set.wake(at: at) }
        streams.register(in: set, owner: self)
    }

    /// Data already queued for a client, or clients waiting for a channel (they came while
    /// the session was down): serve them now, not at the next keepalive.
    /// While the session is in doubt (a quick probe), waiting clients wait for its answer.
    private func registerOpens(in set: PollSet, _ live: LiveSession, now: Double) {
        let inFlight = opening[ObjectIdentifier(live)] != nil
        if !inFlight && !live.keepalive.isProbing && (hasWaiting(for: live) || wantsPoolOpen(on: live, now: now))
            && live.turnIsFree(for: self)
        {
            set.wakeNow()
        }
        if inFlight { set.wake(at: now + 0.5) }
    }

    /// Whether `live` should open a channel for the pool now: the driver's session whenever the
    /// pool is short; an extra one only while a burst is on (`BurstRule.poolHelp`). The opens in
    /// flight on the other sessions count as pooled: with no client waiting they land in the pool,
    /// and a pool one over its size never shrinks back (two sessions each adding the 20th made 21).
    private func wantsPoolOpen(on live: LiveSession, now: Double) -> Bool {
        pool.wantsOpen(now: now, inFlight: opening.count) && (live !== extra || now - lastLong < BurstRule.poolHelp)
    }

    func ready(tag: Int, events: PollEvents) {
        if tag == -1 { acceptClients() } else { streams.socketReady(tag) }
    }

    func drive(_ live: LiveSession?, now: Double) {
        noteQueue(now: now)
        driverDown = live == nil
        guard let live else { return expireWaitingClients(now: now) }
        // A session in doubt gets no new client: one that came after a silence waits for the
        // probe's answer, then goes to this session or to the next one.
        if !live.keepalive.isProbing { openNextChannel(live, now: now) }
        guard live.isAlive else { return }
        streams.pumpAll(live, now: now)
        guard live.isAlive, !live.isDraining else { return }
        tendPool(live, now: now)
        // Tending the pool may have pulled packets off the socket for streams already visited.
        streams.noteUndeliveredData(live)
    }

    func sessionLost(_ live: LiveSession, _ end: SessionEnd) {
        streams.sessionEnded(only: live)
        opening[ObjectIdentifier(live)] = nil
        receivedAtLastTend[ObjectIdentifier(live)] = nil
        pool.clear(only: live)
        if extra === live {
            extra = nil
            burstClients.removeAll()
        }
    }

    /// Make-before-break, or a burst's extra session about to close: the pooled channels on `old`
    /// go back to it to be freed; an open in flight on it is finished there (`opening`).
    func releaseChannels(on old: LiveSession) {
        pool.release(to: old)
        receivedAtLastTend[ObjectIdentifier(old)] = nil
    }

    func holds(_ live: LiveSession) -> Bool {
        opening[ObjectIdentifier(live)] != nil || streams.holds(live) || (live === extra && !burstClients.isEmpty)
    }

    func goodbye(_ live: LiveSession, deadline: Double) {
        closeListener()
        if !live.isDraining { pool.release(to: live) }
        streams.sendFinalEOFs(of: live, deadline: deadline)
    }

    func stop(_ end: SessionEnd) {
        closeListener()
        streams.stop(reason: end.connectionNotice)
        waiting.removeAll()
        opening.removeAll()
        pool.clear()
        extra = nil
        burstClients.removeAll()
    }

    func takeArrivals() -> Int {
        defer { arrivals = 0 }
        return arrivals
    }

    /// For `status`: the forward on the port it got, and the addresses beside it.
    func describe(into snapshot: inout StatusSnapshot) {
        var running = forward
        running.listen = HostPort(host: forward.listen.host, port: listenPort)
        streams.describe(into: &snapshot, forward: running, alsoListening: alsoLocal)
    }

    // MARK: - A burst's extra session

    /// Clients waiting, and within `BurstRule.poolHelp` of one, the pool's shortfall that clients
    /// made: bursts that come back faster than one session refills the pool (20 every 0.7 s: 20
    /// opens take 0.8 s at 40 ms) queue only a few clients each, but 20 opens between them. A new
    /// session's empty pool is not counted (a reconnect's refill is not a burst).
    func channelQueue(now: Double) -> Int {
        waiting.count + (now - lastQueued < BurstRule.poolHelp ? pool.shortfallFromClients(now: now) : 0)
    }

    /// Once a round, before any open: when clients wait, and whether the queue is a burst's
    /// (then every client waiting now may go on the extra session, except this process's own).
    private func noteQueue(now: Double) {
        guard !waiting.isEmpty else { return burstClients.removeAll() }
        lastQueued = now
        guard channelQueue(now: now) >= BurstRule.queueWorthASession else { return }
        lastLong = now
        let own = ownPorts.value
        for id in waiting where streams[id].map({ !own.contains($0.peer.port) }) == true { burstClients.insert(id) }
    }

    func extraStarted(_ extra: LiveSession, now: Double) { self.extra = extra }

    func driveExtra(_ extra: LiveSession, now: Double) {
        noteQueue(now: now)
        if !extra.keepalive.isProbing { openNextChannel(extra, now: now) }
        guard extra.isAlive else { return }
        streams.pumpAll(extra, now: now)
        guard extra.isAlive else { return }
        tendPool(extra, now: now)
        streams.noteUndeliveredData(extra)
        guard now - lastLong >= BurstRule.poolHelp else { return }
        // The burst is over: the extra keeps no pool of its own, and this process's own stream moves off it.
        pool.handBack(from: extra)
        let own = ownPorts.value
        for stream in streams.values.filter({ $0.session === extra && own.contains($0.peer.port) }) {
            finish(stream, live: extra, reason: "moved off the burst session")
        }
    }

    /// This process's own long stream (`tunnel up`'s event follower) now comes from local `port`
    /// (nil: none): never served by a burst's extra session. Safe from any thread.
    func keepOffExtra(port: Int?) {
        ownPorts.value = port.map { [$0] } ?? []
    }

    var connectionsOnExtra: Int { extra.map { extra in streams.values.count { $0.session === extra } } ?? 0 }

    private func closeListener() {
        let all = listeners
        addedLock.lock(); defer { addedLock.unlock() }
        guard !listenerClosed else { return }
        all.forEach { $0.close() }
        listenerClosed = true
    }

    // MARK: - Clients

    private func acceptClients() {
        for listener in listeners { acceptClients(from: listener) }
    }

    private func acceptClients(from listener: OwnedDescriptor) {
        while streams.hasRoom() {
            guard let client = listener.accept() else { return }
            let now = MonotonicClock.now()
            let stream = ForwardedStream(id: streams.newID(), socket: client, now: now)
            streams.add(stream)
            waiting.append(stream.id)
            arrivals += 1
            pool.noteBurst(streams.values.count { now - $0.createdAt < 1 }, now: now)
            emit(.clientOpened(id: stream.id, peer: "\(stream.peer.host):\(stream.peer.port)"))
        }
    }

    /// Clients that came while the session was down wait up to the connect timeout.
    private func expireWaitingClients(now: Double) {
        while let first = waiting.first, let stream = streams[first],
            now - stream.createdAt >= options.connection.connectTimeout
        {
            waiting.removeFirst()
            finish(stream, live: nil, reason: "no SSH session within \(Int(options.connection.connectTimeout)) s")
        }
    }

    /// Closes the client socket, hands its channel to be freed, forgets it.
    private func finish(_ stream: ForwardedStream, live: LiveSession?, reason: String?) {
        streams.finish(stream, live: live, reason: reason)
    }

    // MARK: - Opening channels

    /// Hands pooled channels to waiting clients, then keeps one open in flight while clients
    /// wait or the pool is short; whichever open completes serves the next client, or the pool.
    /// On a draining session only the open already in flight on it goes on.
    private func openNextChannel(_ live: LiveSession, now: Double) {
        while true {
            while !live.isDraining && hasWaiting(for: live) && pool.count > 0 {
                guard let id = takeNextWaiting(live, now: now) else { break }
                guard let stream = streams[id] else { continue }
                let onExtraToo = burstClients.remove(id) != nil
                guard let pooled = pool.take(now: now, on: { onExtraToo || $0 !== extra }) else {
                    waiting.insert(id, at: 0)
                    if onExtraToo { burstClients.insert(id) }
                    break
                }
                stream.attach(pooled.channel, greeting: pooled.greeting, on: pooled.session)
            }
            let key = ObjectIdentifier(live)
            if opening[key] == nil {
                guard !live.isDraining, hasWaiting(for: live) || wantsPoolOpen(on: live, now: now), live.takeTurn(self)
                else { return }
                if let first = waiting.first(where: { mayServe($0, on: live) }), let stream = streams[first] {
                    opening[key] = stream.peer
                } else {
                    opening[key] = (forward.listen.host, listenPort)
                    pool.opening(now: now)
                }
            }
            guard let origin = opening[key] else { return }
            let target = forward.target
            switch live.session.openDirect(
                host: target.host, port: target.port, originHost: origin.host, originPort: origin.port)
            {
            case .wouldBlock:
                return
            case .opened(let channel):
                opening[key] = nil
                live.endTurn(self)
                if let id = takeNextWaiting(live, now: now), let stream = streams[id] {
                    burstClients.remove(id)
                    stream.attach(channel, on: live)
                } else if live.isDraining {
                    live.release(channel)
                } else {
                    pool.add(channel, on: live, now: now)
                }
            case .failed(let error):
                opening[key] = nil
                live.endTurn(self)
                guard !LibSSH2Error.isSessionLevel(error.code) else { return live.fail(error.code) }
                pool.openFailed(now: now)
                let client = takeNextWaiting(live, now: now).flatMap { streams[$0] }
                if error.message.contains("connect failed") {
                    reportNothingListening(now: now)
                    if let client { finish(client, live: live, reason: "nothing listens on VPS \(target)") }
                } else {
                    refusalLock.lock(); refusal = error.message; refusalLock.unlock()
                    streams.noteFailure("the VPS refused the forward: \(error.message)")
                    emit(.forwardRefused(target: target, reason: error.message))
                    if let client {
                        finish(client, live: live, reason: "the VPS refused the forward: \(error.message)")
                    }
                }
            }
        }
    }

    /// Once a round, after every call that may have read packets, and only when bytes came in:
    /// keep what pooled channels' servers sent, and drop the ones closed (a refill follows
    /// at once, or at the backoff's pace).
    private func tendPool(_ live: LiveSession, now: Double) {
        let received = live.session.receivedBytes
        guard pool.count(on: live) > 0, received != receivedAtLastTend[ObjectIdentifier(live)] else { return }
        receivedAtLastTend[ObjectIdentifier(live)] = received
        if pool.tend(live, now: now) { reportNothingListening(now: now) }
    }

    /// Nothing answers behind the VPS: said at most once every 5 s.
    private func reportNothingListening(now: Double) {
        streams.noteFailure("nothing listens on VPS \(forward.target)")
        guard now - lastNothingListening >= 5 else { return }
        lastNothingListening = now
        emit(.nothingListening(target: forward.target, reverseCommand: options.reverseCommand(for: forward)))
    }

    /// Whether `live` may serve waiting client `id`: the driver's session any, a burst's extra
    /// only those that waited while the queue was long (`burstClients`), or any while the driver's is down.
    private func mayServe(_ id: Int, on live: LiveSession) -> Bool {
        live !== extra || driverDown || burstClients.contains(id)
    }

    /// Whether a client waits that `live` may serve.
    private func hasWaiting(for live: LiveSession) -> Bool {
        live !== extra || driverDown ? !waiting.isEmpty : waiting.contains { burstClients.contains($0) }
    }

    /// How long a client that has sent nothing may be passed over by ones that have.
    private let quietPatience = 1.0

    /// The next client to open a channel for. Only one open can be in flight and each costs a
    /// round trip to the VPS, so a client that has already sent its request goes before older
    /// ones that have sent nothing yet (a browser's preconnects), unless those have waited
    /// `quietPatience`; otherwise first come, first served. A client already gone is dropped.
    /// Only clients `live` may serve (`mayServe`) are taken.
    private func takeNextWaiting(_ live: LiveSession, now: Double) -> Int? {
        var index = 0
        var scanned = 0
        while index < waiting.count && scanned < 64 {
            guard let stream = streams[waiting[index]] else { waiting.remove(at: index); continue }
            guard mayServe(waiting[index], on: live) else { index += 1; continue }
            scanned += 1
            if now - stream.createdAt >= quietPatience { return waiting.remove(at: index) }
            var byte: UInt8 = 0
            let peeked = stream.socket.receive(&byte, 1, options: [.peek, .dontWait])
            if case .moved = peeked { return waiting.remove(at: index) }
            if case .failed(let error) = peeked {
                waiting.remove(at: index)
                finish(stream, live: live, reason: "client: \(error)")
                continue
            }
            index += 1
        }
        return waiting.firstIndex { mayServe($0, on: live) }.map { waiting.remove(at: $0) }
    }
}
