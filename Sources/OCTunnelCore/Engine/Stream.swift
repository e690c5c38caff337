import Foundation

/// One socket joined to one channel: the byte pump, the same whichever side opened the
/// channel (a local client's `direct-tcpip`, or a `forwarded-tcpip` the VPS opened to home).
///
/// It keeps only what the other side has not taken yet: `upstream` (socket → channel) and
/// `downstream` (channel → socket). EOF on one side becomes a half-close on the other; a side
/// the other cannot keep up with is not read (socket: its TCP window closes; channel: no window
/// adjust is sent, so the server stops at the channel window); socket bytes are not read while
/// the session's send buffer is above its high-water mark.
final class Stream {
    let id: Int
    /// The client's socket, owned here alone: `close` ends it, and nothing reaches its number after.
    let socket: OwnedDescriptor
    let peer: (host: String, port: Int)
    let createdAt: Double
    private(set) var channel: SSHChannel?
    /// Just joined to its channel: read the socket on the next pump even if it did not poll
    /// readable (it was not polled yet; its request may already be waiting).
    private var freshlyAttached = false
    private(set) var upstream = PendingBytes()
    private(set) var downstream = PendingBytes()
    private var socketEOF = false
    private(set) var eofSent = false
    private(set) var channelEOF = false
    private var socketShut = false
    /// Why this stream broke (a socket error or a channel-level libssh2 error), if it did.
    private(set) var failed: String?
    /// Why socket bytes wait for the channel, if they do: the send buffer was above its
    /// high-water mark, or the channel would not take them (its window, or a key exchange)
    /// when the session had received `at` bytes. `mayMoveUpstream` tells the loop when to retry.
    private(set) var upstreamBlocked: UpstreamBlock?
    /// The session's received-byte count when a channel read answered EAGAIN though libssh2
    /// holds data for the channel: the read first sends a window adjust, and libssh2 cannot
    /// send one during a key exchange (docs/architecture.md, "Re-keys"), so only something
    /// from the VPS (the exchange's reply) can free it. Until then the stream waits, and the
    /// loop sleeps: it once spun on such a read for as long as the reply took (3 s under load,
    /// one poll and one recv every 30 µs, the CPU sshd needed to answer), and the stall watch
    /// named it.
    private(set) var readHeldAt: Int?
    /// What held socket bytes back from the channel (see `upstreamBlocked`).
    enum UpstreamBlock { case sendRoom, channel(receivedAt: Int) }
    /// Bytes read from the socket / written to it.
    private(set) var sent = 0
    private(set) var received = 0
    /// Grows whenever a byte moves in either direction (read or written, socket or channel):
    /// the stall watch's "has it moved since the last look".
    private(set) var moved = 0

    /// Takes ownership of `socket`, non-blocking and close-on-exec (`accept` made it so);
    /// TCP_NODELAY is set here.
    init(id: Int, socket: OwnedDescriptor, now: Double) {
        self.id = id
        self.socket = socket
        createdAt = now
        socket.setNoDelay()
        peer = socket.peer
    }

    /// Joins the socket to `channel`; `greeting` is what the server already sent on it (a
    /// channel opened ahead of need), delivered to the socket first.
    func attach(_ channel: SSHChannel, greeting: PendingBytes = PendingBytes()) {
        self.channel = channel
        downstream = greeting
        received += greeting.count
        freshlyAttached = true
    }

    /// Forgets the channel without freeing it (its session is gone).
    func detach() { channel = nil }

    /// Both directions are finished, or something broke.
    var isDone: Bool { failed != nil || (eofSent && socketShut) }

    /// What to poll the socket for this round; 0 for nothing.
    func pollEvents(sendRoom: Bool) -> Int32 {
        guard channel != nil, failed == nil else { return 0 }
        var events: Int32 = 0
        if sendRoom && !socketEOF && upstream.isEmpty { events |= POLLIN }
        if !downstream.isEmpty { events |= POLLOUT }
        return events
    }

    /// Marks the socket as gone without a channel (e.g. it failed before one was opened).
    func markFailed(_ reason: String) { if failed == nil { failed = reason } }

    /// Moves bytes both ways once: `socketReady` says the socket polled readable.
    ///
    /// The two directions are independent: socket bytes the channel cannot take (its window is
    /// full) never stop the channel's bytes from reaching the socket. They once did, and an
    /// echo deadlocked under load: the server sends no window adjust until its far end reads,
    /// which waits for its own output to drain, which waits for us to read the channel
    /// (docs/architecture.md, "Both directions, always").
    func pump(_ live: LiveSession, socketReady: Bool) {
        pump(live, socketReady: socketReady, readChannel: false)
    }

    /// `pump`, with `readChannel` reading the channel once even if libssh2 reports nothing
    /// queued (a read also resends a window adjust libssh2 could not send before).
    private func pump(_ live: LiveSession, socketReady: Bool, readChannel: Bool) {
        guard let channel, failed == nil else { return }
        let socketReady = socketReady || freshlyAttached
        freshlyAttached = false
        guard moveUpstream(channel, live, socketReady: socketReady, retryHeld: !EngineKnobs.stuckUpstream),
              failed == nil, live.isAlive else { return }
        moveDownstream(channel, live, readChannel: readChannel)
    }

    /// Moves a stalled stream again, each direction on its own: the channel read even if
    /// libssh2 reports nothing queued, then the socket treated as readable.
    func recover(_ live: LiveSession) {
        guard let channel, failed == nil else { return }
        moveDownstream(channel, live, readChannel: true)
        guard failed == nil, live.isAlive else { return }
        _ = moveUpstream(channel, live, socketReady: true, retryHeld: true)
    }

    /// socket → channel: leftovers first, then fresh bytes read straight into scratch, then EOF.
    /// False when the stream or the session failed. `retryHeld` false leaves the leftovers
    /// (`EngineKnobs.stuckUpstream`).
    private func moveUpstream(_ channel: SSHChannel, _ live: LiveSession, socketReady: Bool, retryHeld: Bool) -> Bool {
        let scratch = live.scratch
        if !upstream.isEmpty {
            guard retryHeld else { return true }
            if case .failed = writeUpstreamLeftover(channel, live) { return false }
        }
        if upstream.isEmpty && !socketEOF && socketReady && live.hasSendRoom {
            let received = socket.receive(scratch.pointer, scratch.size)
            if case .moved(let count) = received {
                sent += count
                moved += count
                var offset = 0
                // Stop at the high-water mark: the send buffer then holds at most it plus one write.
                var block = UpstreamBlock.sendRoom
                while offset < count && live.hasSendRoom {
                    let result = channel.write(scratch.pointer + offset, count: count - offset)
                    if case .bytes(let n) = result { offset += n; moved += n; continue }
                    if case .failed(let code) = result { channelFailed(code, live); return false }
                    block = .channel(receivedAt: live.session.receivedBytes)
                    break
                }
                if offset < count {
                    upstream.set(UnsafeRawBufferPointer(start: scratch.pointer + offset, count: count - offset))
                    upstreamBlocked = block
                }
            } else if received == .end {
                socketEOF = true
            } else if case .failed(let error) = received {
                markFailed("client: \(error)")
                return false
            }
        }
        if socketEOF && upstream.isEmpty && !eofSent {
            switch channel.sendEOF() {
            case .done: eofSent = true
            case .wouldBlock: break
            case .failed(let code): channelFailed(code, live); return false
            }
        }
        return true
    }

    /// channel → socket: what waits for the socket first; the channel is read only when
    /// nothing does.
    private func moveDownstream(_ channel: SSHChannel, _ live: LiveSession, readChannel: Bool) {
        let scratch = live.scratch
        if !downstream.isEmpty {
            let written = downstream.withHead { socket.transmit($0, $1) }
            if case .moved(let count) = written { downstream.consume(count); moved += count }
            else if case .failed(let error) = written { return markFailed("client: \(error)") }
        }
        // Reading a channel costs a recv() on the SSH socket; the driver has already drained it
        // this round, so only channels with queued data (or EOF) need a read. At most two reads
        // per stream per round, so one bulk download cannot starve the rest.
        var reads = 0
        if readWaitsForTheVPS(live) && !readChannel { reads = 2 }
        while reads < 2 && downstream.isEmpty && !channelEOF
                && ((readChannel && reads == 0) || channel.hasQueuedData || channel.isEOF) {
            reads += 1
            switch channel.read(into: scratch.pointer, count: scratch.size) {
            case .bytes(let count):
                readHeldAt = nil
                received += count
                moved += count
                let written = socket.transmit(scratch.pointer, count)
                if case .failed(let error) = written { return markFailed("client: \(error)") }
                let taken = written.count
                moved += taken
                if taken < count {
                    downstream.set(UnsafeRawBufferPointer(start: scratch.pointer + taken, count: count - taken))
                }
                continue
            case .eof:
                readHeldAt = nil
                channelEOF = true
            case .wouldBlock:
                if channel.hasQueuedData { readHeldAt = live.session.receivedBytes }
            case .failed(let code):
                return channelFailed(code, live)
            }
            break
        }
        if channelEOF && downstream.isEmpty && !socketShut {
            socket.shutdownSending()
            socketShut = true
        }
    }

    /// What retrying the socket bytes the channel could not take did.
    private enum LeftoverResult { case flushed, blocked, failed }

    /// Retries the socket bytes the channel could not take (its window was full, or the send
    /// buffer was above its high-water mark).
    private func writeUpstreamLeftover(_ channel: SSHChannel, _ live: LiveSession) -> LeftoverResult {
        while !upstream.isEmpty {
            guard live.hasSendRoom else { upstreamBlocked = .sendRoom; return .blocked }
            let result = upstream.withHead { channel.write($0, count: $1) }
            switch result {
            case .bytes(let n): upstream.consume(n); moved += n
            case .failed(let code): channelFailed(code, live); return .failed
            case .wouldBlock, .eof:
                upstreamBlocked = .channel(receivedAt: live.session.receivedBytes)
                return .blocked
            }
        }
        upstreamBlocked = nil
        return .flushed
    }

    private func channelFailed(_ code: Int32, _ live: LiveSession) {
        if LibSSH2Error.isSessionLevel(code) { return live.fail(code) }
        markFailed("channel: libssh2 error \(code)")
    }

    /// Sends EOF on the channel if it has not been sent (blocking session, on the way out).
    func sendFinalEOF() {
        guard let channel, !eofSent else { return }
        _ = channel.sendEOF()
    }

    /// Closes the socket and hands the channel to `live` to be freed (or just drops it when
    /// the session is gone).
    func close(releasingTo live: LiveSession?) {
        if let channel { live?.release(channel) }
        channel = nil
        socket.close()
    }

    /// Closes it (`close(releasingTo:)`) and returns the event that says how it ended: dropped
    /// for `reason`, or closed with its byte counts. Both forwards end their streams this way.
    func finish(releasingTo live: LiveSession?, reason: String?) -> EngineEvent {
        close(releasingTo: live)
        if let reason { return .clientDropped(id: id, reason: reason) }
        return .clientClosed(id: id, sent: sent, received: received)
    }

}
