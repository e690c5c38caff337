import Foundation

// What happens to a byte: the stream that moves it (`ForwardedStream`, its pump), what the loop asks a
// stream between pumps (may it sleep, is it stalled), and the bytes it holds (`PendingBytes`,
// the shared `ScratchBuffer`).

/// One socket joined to one channel: the byte pump, the same whichever side opened the
/// channel (a local client's `direct-tcpip`, or a `forwarded-tcpip` the VPS opened to home).
///
/// It keeps only what the other side has not taken yet: `upstream` (socket → channel) and
/// `downstream` (channel → socket). EOF on one side becomes a half-close on the other; a side
/// the other cannot keep up with is not read (socket: its TCP window closes; channel: no window
/// adjust is sent, so the server stops at the channel window); socket bytes are not read while
/// the session's send buffer is above its high-water mark.
final class ForwardedStream {
    let id: Int
    /// The client's socket, owned here alone: `close` ends it, and nothing reaches its number after.
    let socket: OwnedDescriptor
    let peer: (host: String, port: Int)
    let createdAt: Double
    private(set) var channel: (any EngineChannel)?
    /// The session `channel` belongs to: a stream stays on the session that opened its channel,
    /// also while that session drains after a planned reconnect (`SessionSet`).
    private(set) var session: LiveSession?
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

    /// Joins the socket to `channel` of `live`; `greeting` is what the server already sent on it
    /// (a channel opened ahead of need), delivered to the socket first.
    func attach(_ channel: any EngineChannel, greeting: PendingBytes = PendingBytes(), on live: LiveSession) {
        self.channel = channel
        session = live
        downstream = greeting
        received += greeting.count
        freshlyAttached = true
    }

    /// Forgets the channel without freeing it (its session is gone).
    func detach() {
        channel = nil
        session = nil
    }

    /// Both directions are finished, or something broke.
    var isDone: Bool { failed != nil || (eofSent && socketShut) }

    /// What to poll the socket for this round; empty for nothing.
    func pollEvents(sendRoom: Bool) -> PollEvents {
        guard channel != nil, failed == nil else { return [] }
        var events: PollEvents = []
        if sendRoom && !socketEOF && upstream.isEmpty { events.insert(.readable) }
        if !downstream.isEmpty { events.insert(.writable) }
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
            failed == nil, live.isAlive
        else { return }
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
    private func moveUpstream(
        _ channel: any EngineChannel, _ live: LiveSession, socketReady: Bool, retryHeld: Bool
    ) -> Bool {
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
    private func moveDownstream(_ channel: any EngineChannel, _ live: LiveSession, readChannel: Bool) {
        let scratch = live.scratch
        if !downstream.isEmpty {
            let written = downstream.withHead { socket.transmit($0, $1) }
            if case .moved(let count) = written {
                downstream.consume(count); moved += count
            } else if case .failed(let error) = written {
                return markFailed("client: \(error)")
            }
        }
        // Reading a channel costs a recv() on the SSH socket; the driver has already drained it
        // this round, so only channels with queued data (or EOF) need a read. At most two reads
        // per stream per round, so one bulk download cannot starve the rest.
        var reads = 0
        if readWaitsForTheVPS(live) && !readChannel { reads = 2 }
        while reads < 2 && downstream.isEmpty && !channelEOF
            && ((readChannel && reads == 0) || channel.hasQueuedData || channel.isEOF)
        {
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
    private func writeUpstreamLeftover(_ channel: any EngineChannel, _ live: LiveSession) -> LeftoverResult {
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
        session = nil
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

// MARK: - What the loop asks a stream between pumps

/// What the loop and the stall watch ask a stream between pumps, without moving a byte:
/// whether it holds bytes, whether they could move though no socket event would say so, and
/// whether bytes wait on one side with room on the other (a stall), or it is right to wait.
extension ForwardedStream {
    /// Whether libssh2 holds data (or EOF) for this stream that nothing has delivered yet:
    /// the loop must not sleep while it does.
    func hasUndeliveredChannelData(_ live: LiveSession) -> Bool {
        guard let channel, downstream.isEmpty, !channelEOF, !readWaitsForTheVPS(live) else { return false }
        return channel.hasQueuedData || channel.isEOF
    }

    /// Whether the channel's last read was held back by a key exchange (`readHeldAt`) and
    /// nothing has come from the VPS since: reading again cannot succeed yet.
    func readWaitsForTheVPS(_ live: LiveSession) -> Bool {
        readHeldAt == live.session.receivedBytes
    }

    /// Whether this stream holds bytes for the channel (checked before polling it, no libssh2 call).
    var holdsBytesForChannel: Bool { !upstream.isEmpty }

    /// Whether the bytes this stream holds for the channel could move now, though nothing the
    /// loop polls would say so: the send buffer that held them back has drained below its
    /// high-water mark (the round's last flush does that), or the session has received
    /// something since the channel refused them (a window adjust, or the end of a key
    /// exchange, read by a call later in the round). The loop must not sleep on such a
    /// stream: no socket event would wake it (issue 29's missed wake-up).
    func mayMoveUpstream(_ live: LiveSession) -> Bool {
        guard let channel, failed == nil, !upstream.isEmpty, let upstreamBlocked else { return false }
        switch upstreamBlocked {
        case .sendRoom: return live.hasSendRoom
        case .channel(let receivedAt):
            return live.hasSendRoom && live.session.receivedBytes != receivedAt && channel.sendWindow > 0
        }
    }

    /// A description of the stall if bytes wait on one side with room on the other: queued in
    /// libssh2 while nothing waits for the client socket, or held for the channel while its
    /// window and the session's send buffer have room. Nil when it may rightly be waiting.
    func stallCandidate(_ live: LiveSession, seconds: Double) -> StreamStall? {
        guard let channel, failed == nil else { return nil }
        let toClient = downstream.isEmpty && !channelEOF && channel.hasQueuedData && !readWaitsForTheVPS(live)
        let toVPS = !upstream.isEmpty && live.hasSendRoom && channel.sendWindow > 0 && !waitsForTheVPS(live)
        guard toClient || toVPS else { return nil }
        let windows = channel.windows
        var held: String?
        switch upstreamBlocked {
        case .sendRoom?:
            held = "the send buffer was above its mark (\(live.session.outgoingBacklog) bytes wait for the socket now)"
        case .channel(let receivedAt)?:
            held =
                "the channel refused a write with its window open (a key exchange under way?); "
                + "\(live.session.receivedBytes - receivedAt) bytes received from the VPS since, "
                + "\(live.session.outgoingBacklog) bytes of ours wait for the socket, which "
                + (live.session.socketTakesMore ? "takes more" : "takes no more")
                + " (\(live.session.unacknowledgedBytes.map(String.init) ?? "?") bytes sent and not yet acknowledged)"
        case nil: held = nil
        }
        return StreamStall(
            id: id, direction: toClient ? .toClient : .toVPS, seconds: seconds, queuedInLibSSH2: windows.queued,
            receiveWindow: windows.receive, sendWindow: windows.send, pendingToVPS: upstream.count,
            pendingToClient: downstream.count, sent: sent, received: received, heldBecause: toClient ? nil : held)
    }

    /// Whether the channel refused these bytes with its window open (a key exchange under way)
    /// and the session has heard nothing since: the VPS owes the next packet, as it may for
    /// seconds while it works through what was sent before its key exchange (seen under load:
    /// 0 bytes from the VPS for 1-3 s). What of ours waits then is our part of the exchange,
    /// written by a call earlier in this very round and sent by the round's last flush (seen:
    /// 576 bytes, the socket taking more, nothing of ours unacknowledged). The stream is right
    /// to wait; a VPS that never answers is the keepalive's to find.
    private func waitsForTheVPS(_ live: LiveSession) -> Bool {
        guard case .channel(let receivedAt)? = upstreamBlocked else { return false }
        return live.session.receivedBytes == receivedAt
    }
}

// MARK: - The bytes a stream holds, and the buffer every read goes through

/// Bytes waiting to go one way: only what the other side could not take yet.
struct PendingBytes {
    private var storage: [UInt8] = []
    private var offset = 0

    var count: Int { storage.count - offset }
    var isEmpty: Bool { offset == storage.count }

    mutating func set(_ bytes: UnsafeRawBufferPointer) {
        storage = Array(bytes)
        offset = 0
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if offset > 0 {
            storage.removeFirst(offset)
            offset = 0
        }
        storage.append(contentsOf: bytes)
    }

    mutating func consume(_ n: Int) {
        offset += n
        if offset >= storage.count {
            storage = []
            offset = 0
        }
    }

    func withHead<T>(_ body: (UnsafeRawPointer, Int) -> T) -> T {
        storage.withUnsafeBytes { body($0.baseAddress! + offset, count) }
    }
}

/// The one buffer every fresh read goes through (256 KiB, shared by all streams of a loop);
/// only what the other side does not take is copied out of it.
final class ScratchBuffer {
    let size: Int
    let pointer: UnsafeMutableRawPointer

    init(size: Int = 256 * 1024) {
        self.size = size
        pointer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
    }

    deinit { pointer.deallocate() }
}
