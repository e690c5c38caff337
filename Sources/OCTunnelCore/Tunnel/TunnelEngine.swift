import CLibSSH2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one libssh2 call that left a packet half-sent; until it completes, it is the only
/// call that may touch the session (libssh2 1.10.0 transport.c: one partial packet).
enum PendingSend: Equatable {
    case write(Int)
    case eof(Int)
    case read(Int)
    case open
    case free(ObjectIdentifier)
    case probe
    case idleRead
}

/// Where the connector thread leaves its result for the loop.
private final class ConnectMailbox: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<EstablishedSession, OCTunnelError>?

    func put(_ value: Result<EstablishedSession, OCTunnelError>) {
        lock.lock(); defer { lock.unlock() }
        result = value
    }

    func take() -> Result<EstablishedSession, OCTunnelError>? {
        lock.lock(); defer { lock.unlock() }
        defer { result = nil }
        return result
    }
}

/// The forwarding event loop: one thread, one poll over the SSH socket, the listener, every
/// client and a wake-up pipe; many direct-tcpip channels over one session; keepalive and
/// reconnect with backoff. Idle, it sleeps in poll.
public final class TunnelEngine: @unchecked Sendable {
    public let options: TunnelOptions
    private let emit: @Sendable (TunnelEvent) -> Void
    private let listener: Int32
    /// The port actually listened on (useful with --local-port 0).
    public let localPort: Int
    private var wakeRead: Int32 = -1
    private var wakeWrite: Int32 = -1

    private var established: EstablishedSession?
    private var sessionSince: Double = 0
    private var connectorRunning = false
    private let mailbox = ConnectMailbox()
    private var attempts = 0
    private var everConnected = false
    private var retryAt: Double?
    private var policy = ReconnectPolicy()

    private var connections: [Int: ForwardedConnection] = [:]
    private var waiting: [Int] = []
    private var opening: Int?
    private var closing: [SSHChannel] = []
    private var pending: PendingSend?
    private var nextID = 1

    private var lastInbound: Double = 0
    private var nextProbe: Double = 0
    private var probeOutstanding = false
    private var lastNothingListening: Double = -100
    private var stopRequested = false
    private var queuedForClients = false
    private let refusalLock = NSLock()
    private var refusal: String?

    /// Why the VPS last refused a forward (e.g. "administratively prohibited"), if it has;
    /// safe from any thread, so a health test can name the refusal instead of "nothing listens".
    public var lastForwardRefusal: String? {
        refusalLock.lock(); defer { refusalLock.unlock() }
        return refusal
    }

    private let scratchSize = 256 * 1024
    private let scratch: UnsafeMutableRawPointer
    private let maxConnections = 4096

    /// Binds the local listener now, so a busy port fails before anything else happens.
    public init(options: TunnelOptions, onEvent: @escaping @Sendable (TunnelEvent) -> Void) throws(OCTunnelError) {
        self.options = options
        self.emit = onEvent
        let (fd, port) = try Sockets.listen(bind: options.bind, port: options.localPort)
        listener = fd
        localPort = port
        scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchSize, alignment: 16)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            close(fd)
            throw .cannotListen(bind: options.bind, port: options.localPort, reason: "pipe: \(String(cString: strerror(errno)))")
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        for wakeFD in fds {
            Sockets.setNonBlocking(wakeFD, true)
            _ = fcntl(wakeFD, F_SETFD, FD_CLOEXEC)
        }
    }

    private var listenerClosed = false

    deinit {
        scratch.deallocate()
        if !listenerClosed { close(listener) }
        close(wakeRead)
        close(wakeWrite)
    }

    /// Asks the loop to stop cleanly; safe from any thread.
    public func stop() {
        var byte = UInt8(ascii: "s")
        _ = write(wakeWrite, &byte, 1)
    }

    /// Makes SIGINT/SIGTERM stop this engine (a second signal exits at once).
    public func handleSignals() {
        SignalHandling.install(wakeFD: wakeWrite)
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: - The loop

    /// Runs until `stop()` or a signal (returns) or a failure retrying cannot fix (throws).
    public func run() throws(OCTunnelError) {
        SignalHandling.ignoreSIGPIPE()
        startConnector()
        var fds: [pollfd] = []
        var owners: [Int] = []
        while true {
            let now = Self.now()
            if let result = mailbox.take() { try connectorFinished(result, now: now) }
            if stopRequested {
                shutdownGracefully(reason: "octunnel stopped")
                return
            }
            if let at = retryAt, now >= at, !connectorRunning {
                retryAt = nil
                startConnector()
            }
            expireWaitingClients(now: now)

            fds.removeAll(keepingCapacity: true)
            owners.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)); owners.append(-1)
            if connections.count < maxConnections {
                fds.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)); owners.append(-2)
            }
            if let established {
                // A half-sent packet waits for POLLOUT only (POLLIN too would spin); batched bytes
                // still waiting for the socket need POLLOUT as well as the usual POLLIN.
                let events = pending != nil ? POLLOUT : (established.session.hasOutgoingBacklog ? POLLIN | POLLOUT : POLLIN)
                fds.append(pollfd(fd: established.session.socket, events: Int16(events), revents: 0)); owners.append(-3)
            }
            for (id, connection) in connections where connection.channel != nil && connection.failed == nil {
                var events: Int32 = 0
                if !connection.clientEOF && connection.upstream.isEmpty { events |= POLLIN }
                if !connection.downstream.isEmpty { events |= POLLOUT }
                if events != 0 {
                    fds.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0)); owners.append(id)
                }
            }
            let timeout = pollTimeout(now: now)
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 && errno != EINTR {
                throw .sshFailure(host: options.connection.target.host, port: options.connection.target.port,
                                  detail: "poll: \(String(cString: strerror(errno)))")
            }
            var readable = Set<Int>()
            var sshReadable = false
            for (index, pfd) in fds.enumerated() where pfd.revents != 0 {
                switch owners[index] {
                case -1: drainWakePipe()
                case -2: acceptClients()
                case -3: sshReadable = true
                default: readable.insert(owners[index])
                }
            }
            if established != nil {
                driveSession(sshReadable: sshReadable, clientEvents: readable)
            }
        }
    }

    private func pollTimeout(now: Double) -> Int32 {
        // Data already queued for a client, or clients waiting for a channel on a live session
        // (they came while it was down): serve them now, not at the next keepalive.
        if established != nil && (queuedForClients || (opening == nil && !waiting.isEmpty && pending == nil)) { return 0 }
        var deadline = Double.infinity
        if let at = retryAt { deadline = min(deadline, at) }
        if established != nil {
            deadline = min(deadline, nextProbe, lastInbound + deadAfter)
            if !closing.isEmpty || opening != nil || probeOutstanding { deadline = min(deadline, now + 0.5) }
        }
        if let first = waiting.first, let connection = connections[first], established == nil {
            deadline = min(deadline, connection.acceptedAt + options.connection.connectTimeout)
        }
        if deadline == .infinity { return -1 }
        return Int32(max(0, min(60_000, ((deadline - now) * 1000).rounded(.up))))
    }

    private var deadAfter: Double { options.keepalive * 3 + 1 }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(wakeRead, &buffer, buffer.count)
            if count <= 0 { break }
            if buffer[..<count].contains(UInt8(ascii: "s")) { stopRequested = true }
        }
    }

    // MARK: - Connecting

    private func startConnector() {
        attempts += 1
        connectorRunning = true
        emit(.connecting(target: options.connection.target, attempt: attempts))
        let connector = SSHConnector(settings: options.connection)
        let mailbox = self.mailbox
        let emit = self.emit
        let wake = wakeWrite
        let thread = Thread {
            let result = Result<EstablishedSession, OCTunnelError> { () throws(OCTunnelError) -> EstablishedSession in
                try connector.connect(onStage: { emit(.stage($0)) })
            }
            mailbox.put(result)
            var byte = UInt8(ascii: "c")
            _ = write(wake, &byte, 1)
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func connectorFinished(_ result: Result<EstablishedSession, OCTunnelError>, now: Double) throws(OCTunnelError) {
        connectorRunning = false
        switch result {
        case .success(let session):
            session.session.startBatching()
            established = session
            sessionSince = now
            lastInbound = now
            nextProbe = now + options.keepalive
            probeOutstanding = false
            pending = nil
            emit(.connected(target: options.connection.target, info: session.info))
            if !everConnected {
                emit(.forwarding(local: HostPort(host: options.bind, port: localPort), remote: options.remote))
            }
            everConnected = true
        case .failure(let error):
            if error.isFatalOnReconnect || (!everConnected && options.exitOnFirstFailure) {
                closeAllClients(reason: "tunnel stopped")
                throw error
            }
            scheduleRetry(reason: error.localizedDescription, uptime: nil, now: now)
        }
    }

    private func scheduleRetry(reason: String, uptime: Double?, now: Double) {
        let delay = policy.nextDelay(afterUptime: uptime)
        retryAt = now + delay
        emit(.disconnected(reason: reason, retryIn: delay))
    }

    /// Drops the session after a failure: clients with a channel are closed, waiting ones stay.
    private func teardown(reason: String) {
        guard let established else { return }
        let now = Self.now()
        // Free the session first: channels dropped after this never touch the dead socket.
        established.session.close()
        for (id, connection) in connections where connection.channel != nil || id == opening {
            connection.channel = nil
            finish(connection, reason: "session lost")
        }
        opening = nil
        closing.removeAll()
        pending = nil
        probeOutstanding = false
        self.established = nil
        scheduleRetry(reason: reason, uptime: now - sessionSince, now: now)
    }

    // MARK: - Clients

    private func acceptClients() {
        while connections.count < maxConnections {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            Sockets.setNonBlocking(fd, true)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let connection = ForwardedConnection(id: nextID, fd: fd, acceptedAt: Self.now())
            nextID += 1
            connections[connection.id] = connection
            waiting.append(connection.id)
            emit(.clientOpened(id: connection.id, peer: "\(connection.peer.host):\(connection.peer.port)"))
        }
    }

    /// Clients that came while the session was down wait up to the connect timeout.
    private func expireWaitingClients(now: Double) {
        guard established == nil else { return }
        while let first = waiting.first, let connection = connections[first],
              now - connection.acceptedAt >= options.connection.connectTimeout {
            waiting.removeFirst()
            finish(connection, reason: "no SSH session within \(Int(options.connection.connectTimeout)) s")
        }
    }

    private func closeAllClients(reason: String) {
        for connection in Array(connections.values) {
            connection.channel = nil
            finish(connection, reason: reason)
        }
        waiting.removeAll()
    }

    /// Closes the client socket, hands its channel to the closing list, forgets it.
    private func finish(_ connection: ForwardedConnection, reason: String?) {
        if let channel = connection.channel {
            closing.append(channel)
            connection.channel = nil
        }
        close(connection.fd)
        connections[connection.id] = nil
        if let reason {
            emit(.clientDropped(id: connection.id, reason: reason))
        } else {
            emit(.clientClosed(id: connection.id, sent: connection.sent, received: connection.received))
        }
    }

    // MARK: - Driving the session

    /// Runs one libssh2 call unless another call owns a half-sent packet; records ownership
    /// when this call leaves one. Returns nil when skipped.
    private func ssh<T>(_ op: PendingSend, isWouldBlock: (T) -> Bool, _ body: () -> T) -> T? {
        if let pending, pending != op { return nil }
        let result = body()
        if isWouldBlock(result), let established, established.session.isSendBlocked {
            pending = op
        } else if pending == op {
            pending = nil
        }
        return result
    }

    private func sshIO(_ op: PendingSend, _ body: () -> IOResult) -> IOResult? {
        ssh(op, isWouldBlock: { $0 == .wouldBlock }, body)
    }

    private func sshCode(_ op: PendingSend, _ body: () -> Int32) -> Int32? {
        ssh(op, isWouldBlock: { $0 == LIBSSH2_ERROR_EAGAIN }, body)
    }

    /// Errors that end the whole session, not just one channel.
    private static func isSessionError(_ code: Int32) -> Bool {
        switch code {
        case LIBSSH2_ERROR_CHANNEL_FAILURE, LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED, LIBSSH2_ERROR_CHANNEL_UNKNOWN,
             LIBSSH2_ERROR_CHANNEL_CLOSED, LIBSSH2_ERROR_CHANNEL_EOF_SENT, LIBSSH2_ERROR_CHANNEL_WINDOW_EXCEEDED,
             LIBSSH2_ERROR_CHANNEL_PACKET_EXCEEDED, LIBSSH2_ERROR_CHANNEL_OUTOFORDER:
            return false
        default:
            return true
        }
    }

    private func sessionFailed(_ code: Int32) {
        guard let established else { return }
        let message = established.session.error(code, "session").message
        teardown(reason: "connection to VPS lost (\(message.isEmpty ? "libssh2 error \(code)" : message))")
    }

    private func driveSession(sshReadable: Bool, clientEvents: Set<Int>) {
        guard let established else { return }
        let now = Self.now()
        established.session.newRound()
        // Everything libssh2 sent this round leaves in one send() at the end of it.
        defer { flushSession() }
        if established.session.hasOutgoingBacklog && !established.session.flushOutgoing() {
            return teardown(reason: "connection to VPS lost (send: \(established.session.outgoingFailure))")
        }
        // The idle channel reads the socket for everyone, so a readable socket never spins.
        if sshReadable || pending == .idleRead {
            if case .failed(let code)? = sshIO(.idleRead, { established.idleChannel.read(into: scratch, count: scratchSize) }) {
                return sessionFailed(code)
            }
        }
        guard self.established != nil else { return }
        if !keepalive(now: now) { return }
        openNextChannel(now: now)
        guard self.established != nil else { return }
        for connection in Array(connections.values) where connection.channel != nil {
            pump(connection, clientReady: clientEvents.contains(connection.id))
            guard self.established != nil else { return }
            if connection.isDone && pending != .write(connection.id) && pending != .eof(connection.id) && pending != .read(connection.id) {
                finish(connection, reason: connection.failed)
            }
        }
        freeClosingChannels()
        // Calls above may have pulled packets off the socket for channels already visited:
        // if any such data waits, the next poll must not sleep.
        queuedForClients = pending == nil && connections.values.contains { connection in
            guard let channel = connection.channel, connection.downstream.isEmpty, !connection.channelEOF else { return false }
            return channel.hasQueuedData || channel.isEOF
        }
    }

    private func flushSession() {
        guard let established, !established.session.flushOutgoing() else { return }
        teardown(reason: "connection to VPS lost (send: \(established.session.outgoingFailure))")
    }

    /// Probes liveness with a request the server must answer; returns false when the session died.
    private func keepalive(now: Double) -> Bool {
        guard let established else { return false }
        if now - lastInbound > deadAfter {
            teardown(reason: "no answer from the VPS for \(Int(now - lastInbound)) s (keepalive)")
            return false
        }
        guard probeOutstanding || now >= nextProbe else { return true }
        guard let rc = sshCode(.probe, { established.idleChannel.setenv("OCTUNNEL_KEEPALIVE", "1") }) else { return true }
        if !probeOutstanding { nextProbe = now + options.keepalive }
        if rc == LIBSSH2_ERROR_EAGAIN {
            probeOutstanding = true
        } else if rc == 0 || rc == LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED {
            probeOutstanding = false
            lastInbound = now
        } else {
            sessionFailed(rc)
            return false
        }
        return true
    }

    private func openNextChannel(now: Double) {
        guard let established else { return }
        while true {
            if opening == nil {
                guard let next = takeNextWaiting(now: now) else { return }
                opening = next
            }
            guard let id = opening, let connection = connections[id] else { opening = nil; continue }
            let remote = options.remote
            var outcome: SSHSession.OpenResult?
            _ = sshCode(.open) {
                outcome = established.session.openDirectTCPIP(host: remote.host, port: remote.port,
                                                              originHost: connection.peer.host, originPort: connection.peer.port)
                if case .wouldBlock? = outcome { return LIBSSH2_ERROR_EAGAIN }
                return 0
            }
            switch outcome {
            case nil, .wouldBlock?:
                return
            case .opened(let channel)?:
                opening = nil
                connection.channel = channel
            case .failed(let error)?:
                // A session error: teardown still sees `opening` and closes this client too.
                guard !Self.isSessionError(error.code) else { return sessionFailed(error.code) }
                opening = nil
                if error.message.contains("connect failed") {
                    if now - lastNothingListening >= 5 {
                        lastNothingListening = now
                        emit(.nothingListening(remote: remote, reverseCommand: options.reverseCommand))
                    }
                    finish(connection, reason: "nothing listens on VPS \(remote)")
                } else {
                    refusalLock.lock(); refusal = error.message; refusalLock.unlock()
                    emit(.forwardRefused(remote: remote, reason: error.message))
                    finish(connection, reason: "the VPS refused the forward: \(error.message)")
                }
            }
        }
    }

    /// How long a client that has sent nothing may be passed over by ones that have.
    private let quietPatience = 1.0

    /// The next client to open a channel for. Only one open can be in flight and each costs a
    /// round trip to the VPS, so a client that has already sent its request goes before older
    /// ones that have sent nothing yet (a browser's preconnects), unless those have waited
    /// `quietPatience`; otherwise first come, first served. A client already gone is dropped.
    private func takeNextWaiting(now: Double) -> Int? {
        var index = 0
        var scanned = 0
        while index < waiting.count && scanned < 64 {
            guard let connection = connections[waiting[index]] else { waiting.remove(at: index); continue }
            scanned += 1
            if now - connection.acceptedAt >= quietPatience { return waiting.remove(at: index) }
            var byte: UInt8 = 0
            let peeked = recv(connection.fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
            if peeked > 0 { return waiting.remove(at: index) }
            if peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                waiting.remove(at: index)
                finish(connection, reason: "client: \(String(cString: strerror(errno)))")
                continue
            }
            index += 1
        }
        return waiting.isEmpty ? nil : waiting.removeFirst()
    }

    /// Moves bytes both ways for one connection, carrying half-closes and holding back a side
    /// the other cannot keep up with.
    private func pump(_ connection: ForwardedConnection, clientReady: Bool) {
        guard let channel = connection.channel else { return }
        let id = connection.id

        // client → channel: leftovers first, then fresh bytes read straight into scratch.
        if !connection.upstream.isEmpty {
            guard writeUpstreamLeftover(connection, channel) else { return }
        }
        if connection.upstream.isEmpty && !connection.clientEOF && connection.failed == nil && clientReady {
            let count = recv(connection.fd, scratch, scratchSize, 0)
            if count > 0 {
                connection.sent += count
                var offset = 0
                while offset < count {
                    guard let result = sshIO(.write(id), { channel.write(scratch + offset, count: count - offset) }) else { break }
                    if case .bytes(let n) = result { offset += n; continue }
                    if case .failed(let code) = result { return channelFailed(connection, code) }
                    break
                }
                if offset < count {
                    connection.upstream.set(UnsafeRawBufferPointer(start: scratch + offset, count: count - offset))
                }
            } else if count == 0 {
                connection.clientEOF = true
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                connection.failed = "client: \(String(cString: strerror(errno)))"
                return
            }
        }
        if connection.clientEOF && connection.upstream.isEmpty && !connection.eofSent {
            if let rc = sshCode(.eof(id), { channel.sendEOF() }) {
                if rc == 0 { connection.eofSent = true }
                else if rc != LIBSSH2_ERROR_EAGAIN { return channelFailed(connection, rc) }
            }
        }

        // channel → client: only read when nothing is waiting for the client.
        if !connection.downstream.isEmpty {
            let sent = connection.downstream.withHead { send(connection.fd, $0, $1, Int32(MSG_NOSIGNAL)) }
            if sent > 0 { connection.downstream.consume(sent) }
            else if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                connection.failed = "client: \(String(cString: strerror(errno)))"
                return
            }
        }
        // Reading a channel costs a recv() on the SSH socket; the idle channel has already drained
        // it this round, so only channels with queued data (or EOF) need a read.
        // At most two reads per connection per round, so one bulk download cannot starve the rest.
        var reads = 0
        while reads < 2 && connection.downstream.isEmpty && !connection.channelEOF
                && (channel.hasQueuedData || channel.isEOF || pending == .read(id)) {
            reads += 1
            guard let result = sshIO(.read(id), { channel.read(into: scratch, count: scratchSize) }) else { break }
            switch result {
            case .bytes(let count):
                lastInbound = Self.now()
                connection.received += count
                let sent = send(connection.fd, scratch, count, Int32(MSG_NOSIGNAL))
                if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                    connection.failed = "client: \(String(cString: strerror(errno)))"
                    return
                }
                let taken = max(0, sent)
                if taken < count {
                    connection.downstream.set(UnsafeRawBufferPointer(start: scratch + taken, count: count - taken))
                }
                continue
            case .eof:
                connection.channelEOF = true
            case .wouldBlock:
                break
            case .failed(let code):
                return channelFailed(connection, code)
            }
            break
        }
        if connection.channelEOF && connection.downstream.isEmpty && !connection.clientShut {
            shutdown(connection.fd, Int32(SHUT_WR))
            connection.clientShut = true
        }
    }

    /// Retries the client bytes the channel could not take; false when it still cannot.
    private func writeUpstreamLeftover(_ connection: ForwardedConnection, _ channel: SSHChannel) -> Bool {
        while !connection.upstream.isEmpty {
            let result = connection.upstream.withHead { pointer, count in
                sshIO(.write(connection.id), { channel.write(pointer, count: count) })
            }
            guard let result else { return false }
            switch result {
            case .bytes(let n): connection.upstream.consume(n)
            case .failed(let code): channelFailed(connection, code); return false
            case .wouldBlock, .eof: return false
            }
        }
        return true
    }

    private func channelFailed(_ connection: ForwardedConnection, _ code: Int32) {
        if Self.isSessionError(code) { return sessionFailed(code) }
        connection.failed = "channel: libssh2 error \(code)"
    }

    private func freeClosingChannels() {
        var still: [SSHChannel] = []
        for channel in closing {
            guard let rc = sshCode(.free(ObjectIdentifier(channel)), { channel.free() }) else { still.append(channel); continue }
            if rc == LIBSSH2_ERROR_EAGAIN { still.append(channel); continue }
            if rc != 0 && Self.isSessionError(rc) {
                closing = []
                return sessionFailed(rc)
            }
        }
        closing = still
    }

    // MARK: - Stopping

    /// Says goodbye within about 1.2 s, even to a VPS that hangs: EOF on each channel and a
    /// disconnect while the budget lasts, then the socket is shut before anything is freed, so
    /// no channel free can wait for an answer (each would wait its own timeout).
    private func shutdownGracefully(reason: String) {
        emit(.stopping(reason: reason))
        close(listener)
        listenerClosed = true
        let deadline = Self.now() + 1.2
        if let established {
            established.session.setBlocking(true)
            established.session.setTimeout(milliseconds: 300)
            if pending == nil {
                for connection in connections.values where connection.channel != nil && !connection.eofSent {
                    if Self.now() > deadline { break }
                    _ = connection.channel?.sendEOF()
                }
                if Self.now() < deadline { established.session.disconnect(reason: reason) }
            }
            established.session.close()
        }
        for connection in Array(connections.values) {
            connection.channel = nil
            close(connection.fd)
        }
        connections.removeAll()
        waiting.removeAll()
        closing.removeAll()
        established = nil
    }
}
