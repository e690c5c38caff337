/// One authenticated session during its life in the loop, as forwards and streams see it:
/// the libssh2 session, the shared scratch buffer, whether the send buffer has room, and the
/// ways to report what happened (bytes heard, the session's end, a channel to free).
/// Owned by the `SessionDriver`, which tears the session down after any round that failed it.
final class LiveSession {
    let established: EstablishedSession
    let scratch: ScratchBuffer
    /// Client bytes are not read while more than this waits for the SSH socket; the send
    /// buffer then holds at most this plus one channel write (32 KiB and a packet header).
    let highWater: Int
    let startedAt: Double
    var keepalive: Keepalive
    /// Why the session must be dropped, once a call has failed it.
    private(set) var failure: SessionEnd?
    private var closing: [SSHChannel] = []
    /// The session's received-byte count when the VPS was last heard (`noteInbound`).
    private var receivedSoFar: Int
    /// Whose turn it is to open a channel or listen (`takeTurn`).
    private(set) var turn = OpenTurn()

    init(established: EstablishedSession, scratch: ScratchBuffer, keepaliveInterval: Double, highWater: Int, now: Double) {
        self.established = established
        self.scratch = scratch
        self.highWater = highWater
        startedAt = now
        keepalive = Keepalive(interval: keepaliveInterval, now: now)
        receivedSoFar = established.session.receivedBytes
    }

    var session: SSHSession { established.session }

    /// A new round of the loop (the driver's): the turn's priorities age by one.
    func beginRound() { turn.beginRound() }
    var isAlive: Bool { failure == nil }

    /// Whether a stream may read more client bytes for the VPS now (the send buffer is below
    /// its high-water mark).
    var hasSendRoom: Bool { session.outgoingBacklog < highWater }

    /// The one place that records the VPS was heard: any byte read from the SSH socket since
    /// the last call (by any call: the idle channel's read, a stream's, a keepalive's) proves
    /// the session alive at `now`. The driver calls it once a round, after the idle read.
    func noteInbound(now: Double) {
        let received = session.receivedBytes
        guard received != receivedSoFar else { return }
        receivedSoFar = received
        keepalive.heard(at: now)
    }

    /// A libssh2 call failed with a session-level `code`: the session is dropped after this
    /// round (libssh2's message is read now, while it is the one for this failure).
    func fail(_ code: Int32) {
        guard failure == nil else { return }
        failure = .vpsClosed(code: code, message: session.error(code, "session").message)
    }

    /// The session must be dropped after this round for `end` (the first reason stays).
    func fail(_ end: SessionEnd) {
        if failure == nil { failure = end }
    }

    /// Whether `owner` may start (or repeat) a call whose state libssh2 keeps in the session
    /// (a channel open, a listen): the turn is the session's, not a forward's (`OpenTurn`).
    /// Not holding it, `owner` is remembered as asking.
    func takeTurn(_ owner: AnyObject) -> Bool { turn.take(owner) }

    /// Whether `takeTurn(owner)` would give `owner` the turn now (for a wake-up: a forward
    /// waiting for another's open must not spin).
    func turnIsFree(for owner: AnyObject) -> Bool { turn.isFree(for: owner) }

    /// `owner`'s call is over (opened, listening or failed): the next may go.
    func endTurn(_ owner: AnyObject) { turn.end(owner) }

    /// Hands a channel that is done to be freed (`libssh2_channel_free` repeats while it would block).
    func release(_ channel: SSHChannel) { closing.append(channel) }

    /// Channels still being freed: the loop wakes within 0.5 s to continue.
    var isFreeingChannels: Bool { !closing.isEmpty }

    /// One step of freeing every released channel.
    func freeReleasedChannels() {
        var still: [SSHChannel] = []
        for channel in closing {
            switch channel.free() {
            case .done: continue
            case .wouldBlock: still.append(channel)
            case .failed(let code):
                if LibSSH2Error.isSessionLevel(code) { closing = []; return fail(code) }
            }
        }
        closing = still
    }

    /// Forgets channels waiting to be freed (the session itself is being freed).
    func dropReleasedChannels() { closing.removeAll() }
}
