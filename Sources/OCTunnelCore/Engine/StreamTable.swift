import Foundation

/// The streams of one forward and the bookkeeping both forwards share: numbering connections,
/// the cap on how many are open, polling their sockets and which polled readable, one pump
/// round, ending them, the session's loss, their counters and `status` lines, and the stall
/// watch. A forward keeps only what differs: how a stream gets its channel.
///
/// The stall watch: once a second, while some stream holds bytes, it asks each stream whether
/// bytes wait on one side with room on the other (`ForwardedStream.stallCandidate`). A stream that
/// answers yes twice in a row without moving a byte in between has stalled: the watch says so
/// (`EngineEvent.streamStalled`, with the channel's counters), counts it for `status`, and
/// moves it again (`ForwardedStream.recover`). It must never fire; it exists so that a stall can never
/// again pass silently (issue 17).
final class StreamTable {
    private let emit: @Sendable (EngineEvent) -> Void
    private(set) var streams: [Int: ForwardedStream] = [:]
    /// Bytes of finished streams and the forward's last failure.
    private var counters = ForwardCounters()
    /// Connections numbered so far; the next gets `issued + 1` (numbers are never reused).
    private(set) var issued = 0
    /// Streams whose sockets polled readable this round (filled by the poll, read by `pumpAll`).
    private var readable = Set<Int>()
    /// The most connections a forward carries at once, streams and those still being set up.
    static let maxConnections = 4096
    /// Whether libssh2 holds bytes (or EOF) for a stream that nothing has delivered yet: the
    /// next poll must not sleep.
    private(set) var hasUndeliveredData = false
    /// Stalls found and recovered since start.
    private(set) var stalls = 0

    /// How often the watch looks; a stall is named after one to two of these.
    let stallInterval: Double
    private var lastStallCheck = -Double.infinity
    /// Streams that had bytes waiting with room at the last look, and how far they had moved.
    private var suspects: [Int: Int] = [:]

    init(stallInterval: Double = 1, emit: @escaping @Sendable (EngineEvent) -> Void) {
        self.stallInterval = stallInterval
        self.emit = emit
    }

    subscript(id: Int) -> ForwardedStream? { streams[id] }
    var count: Int { streams.count }
    var values: Dictionary<Int, ForwardedStream>.Values { streams.values }

    func add(_ stream: ForwardedStream) { streams[stream.id] = stream }

    /// The number of a new connection (the first is 1).
    func newID() -> Int {
        issued += 1
        return issued
    }

    /// Whether one more connection may be taken, with `others` open outside the table (being
    /// connected, or answered without a stream).
    func hasRoom(besides others: Int = 0) -> Bool { streams.count + others < Self.maxConnections }

    /// The stream `id`'s socket polled readable (its owner's `PollOwner.ready`).
    func socketReady(_ id: Int) { readable.insert(id) }

    /// The forward's last failure, for `status` (a refused forward, nothing listening).
    func noteFailure(_ text: String) { counters.failed(text) }

    /// Polls each stream's socket for what it can take now (the send room of the stream's own
    /// session), and wakes the loop for the next look of the stall watch while any stream holds bytes.
    func register(in set: PollSet, owner: PollOwner) {
        readable.removeAll(keepingCapacity: true)
        if hasUndeliveredData { set.wakeNow() }
        var holding = hasUndeliveredData
        for (id, stream) in streams {
            guard let session = stream.session else { continue }
            let events = stream.pollEvents(sendRoom: session.hasSendRoom)
            if !events.isEmpty { set.watch(stream.socket, events: events, owner: owner, tag: id) }
            if stream.holdsBytesForChannel {
                holding = true
                if stream.mayMoveUpstream(session) { set.wakeNow() }
            }
        }
        if holding || !suspects.isEmpty { set.wake(at: lastStallCheck + stallInterval) }
    }

    /// One pump round over every stream with a channel of `live` (`socketReady` for those whose
    /// sockets polled readable); ends finished ones; then the stall watch over every session's
    /// streams, if its interval has passed.
    func pumpAll(_ live: LiveSession, now: Double) {
        for stream in Array(streams.values) where stream.channel != nil && stream.session === live {
            stream.pump(live, socketReady: readable.contains(stream.id))
            guard live.isAlive else { return }
            if stream.isDone { finish(stream, live: live, reason: stream.failed) }
        }
        if now - lastStallCheck >= stallInterval { watchForStalls(live, now: now) }
        guard live.isAlive else { return }
        noteUndeliveredData(live)
    }

    /// Calls made after `pumpAll` may have pulled packets off the socket for streams already
    /// visited: look again before the loop sleeps.
    func noteUndeliveredData(_ live: LiveSession) {
        hasUndeliveredData = streams.values.contains { stream in
            stream.session.map { stream.hasUndeliveredChannelData($0) } ?? false
        }
    }

    /// The stall watch, each stream with its own session (a draining session's streams too).
    private func watchForStalls(_ live: LiveSession, now: Double) {
        let elapsed = now - lastStallCheck
        lastStallCheck = now
        var waiting: [Int: Int] = [:]
        for stream in Array(streams.values) where stream.channel != nil {
            guard let session = stream.session, session.isAlive,
                let stall = stream.stallCandidate(session, seconds: elapsed)
            else { continue }
            if suspects[stream.id] == stream.moved {
                stalls += 1
                emit(.streamStalled(stall))
                stream.recover(session)
                guard live.isAlive else { return }
                if stream.isDone { finish(stream, live: session, reason: stream.failed); continue }
            }
            waiting[stream.id] = stream.moved
        }
        suspects = waiting
    }

    /// Closes a stream, hands its channel to be freed, counts its bytes, says how it ended.
    func finish(_ stream: ForwardedStream, live: LiveSession?, reason: String?) {
        counters.finished(stream)
        streams[stream.id] = nil
        suspects[stream.id] = nil
        emit(stream.finish(releasingTo: live, reason: reason))
    }

    /// `live` is gone: every stream with a channel of it ends (streams still waiting for one
    /// stay, as do streams of another session).
    func sessionEnded(only live: LiveSession) {
        for stream in Array(streams.values) where stream.channel != nil && stream.session === live {
            stream.detach()
            suspects[stream.id] = nil
            finish(stream, live: nil, reason: "session lost")
        }
        hasUndeliveredData = streams.values.contains { $0.channel != nil } && hasUndeliveredData
    }

    /// Whether a stream still has a channel of `live` (a draining session is closed once none has).
    func holds(_ live: LiveSession) -> Bool { streams.values.contains { $0.session === live } }

    /// Sends EOF on every channel of `live` while the deadline lasts (on the way out).
    func sendFinalEOFs(of live: LiveSession, deadline: Double) {
        for stream in streams.values where stream.session === live {
            if MonotonicClock.now() > deadline { break }
            stream.sendFinalEOF()
        }
    }

    /// Ends every stream: with an event saying `reason`, or silently when it is nil.
    func stop(reason: String?) {
        for stream in Array(streams.values) {
            stream.detach()
            if let reason { finish(stream, live: nil, reason: reason) } else { stream.close(releasingTo: nil) }
        }
        streams.removeAll()
        suspects = [:]
        hasUndeliveredData = false
    }

    /// A forward's part of a `status` snapshot: `forward` as it runs (its bound listen, its
    /// target now), the addresses it also listens on, connections open (`alsoOpen`: those
    /// outside the table) and since start, bytes both ways (finished and open streams), its
    /// last failure, the stalls.
    func describe(
        into snapshot: inout StatusSnapshot, forward running: Forward, alsoListening: [HostPort] = [], alsoOpen: Int = 0
    ) {
        var forward = StatusSnapshot.ForwardStatus(
            running, openConnections: streams.count + alsoOpen, totalConnections: issued)
        // The first forward (OpenCode's) gives the session's `local` and `remote`, kept for
        // scripts; counts add up.
        if snapshot.forwards.isEmpty {
            snapshot.local = forward.thisMachineEnd
            snapshot.alsoLocal = alsoListening
            snapshot.remote = forward.vpsEnd
        }
        counters.describe(into: &forward, open: streams.values)
        if let lastError = counters.lastError { snapshot.noteError(lastError.text, at: lastError.at) }
        snapshot.openConnections += forward.openConnections
        snapshot.totalConnections += forward.totalConnections
        snapshot.bytesIn += forward.bytesIn
        snapshot.bytesOut += forward.bytesOut
        snapshot.stalls += stalls
        snapshot.forwards.append(forward)
    }
}
