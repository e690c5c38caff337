/// What a session is used for, plugged into a `SessionDriver`: `LocalForward` (laptop side)
/// opens `direct-tcpip` channels for local clients; a remote forward (home side) listens on
/// the VPS and accepts the `forwarded-tcpip` channels it opens. The driver owns the session
/// (connect, keepalive, dead-session detection, reconnect, the send buffer); the forward owns
/// its channels, its sockets and the `ForwardedStream`s that join them.
///
/// All calls come from the loop thread. Inside `drive` the forward may call libssh2 freely on
/// `live.session`: sends never fail with EAGAIN (see `BatchedSocketIO`), so no call has to be
/// repeated before another may run. A session-level failure is reported with `live.fail`;
/// the driver tears the session down at the end of that round and calls `sessionEnded` with
/// the `SessionEnd` it failed with.
protocol SessionForward: AnyObject {
    /// A session has authenticated; its first round follows (e.g. start a remote listen here).
    func sessionStarted(_ live: LiveSession, now: Double)

    /// One round: with a live session, open or accept channels and pump streams; with nil
    /// (no session yet, or reconnecting), only what needs no session (e.g. expire waiters).
    func drive(_ live: LiveSession?, now: Double)

    /// `live` is gone (already freed) for `end`: drop whatever used its channels (a draining
    /// session's end leaves the current session's streams alone).
    func sessionLost(_ live: LiveSession, _ end: SessionEnd)

    /// `live` takes no new connections any more (a planned reconnect replaced it: it drains,
    /// `SessionSet`): hand back what was opened on it ahead of need; its streams stay on it.
    func releaseChannels(on live: LiveSession)

    /// Whether anything of this forward still uses `live` (a stream, an open in flight): a
    /// draining session is freed once no forward holds it.
    func holds(_ live: LiveSession) -> Bool

    /// Adds this forward's sockets and wake-up times to the coming poll.
    func register(in set: PollSet, live: LiveSession?, now: Double)

    /// The loop is stopping and `live` is blocking with a short timeout: say goodbye on the
    /// forward's channels (EOF, cancel a listen) until `deadline`; stop accepting new work.
    func goodbye(_ live: LiveSession, deadline: Double)

    /// The loop is stopping (`.stopped`) or failed for good (the failure): close every socket,
    /// telling each open connection `end.connectionNotice` (nothing on a clean stop).
    func stop(_ end: SessionEnd)

    /// Adds what this forward counts to a `status` snapshot: `local`, `remote`, connections,
    /// bytes, and its own last failure (`noteError`). Called on the loop thread.
    func describe(into snapshot: inout StatusSnapshot)

    /// Clients that arrived since the last call (the driver probes a quiet session for them).
    /// While `live.keepalive.isProbing`, a forward hands no new client to the session.
    /// Only the laptop side has such clients: they arrive on a local socket, whatever the
    /// session's state. The home side's clients arrive as `forwarded-tcpip` opens the VPS
    /// sends over the session itself: the bytes of the open are read from the session's
    /// socket, and `LiveSession.noteInbound` counts them as the VPS heard before the driver
    /// looks for arrivals: the session has just been heard when one comes, and a count from
    /// `RemoteForward` would not start a probe. It keeps the default of none (issue 27).
    func takeArrivals() -> Int

    /// Whether a second session may come up beside this one before it is dropped
    /// (make-before-break); not for a remote forward, whose VPS port the old session holds.
    var allowsOverlap: Bool { get }

    // A burst's extra session (`BurstSession`): a second session to the same VPS the driver
    // opens while clients queue for channels, and closes once the burst is over. Streams stay
    // on the session that opened them. The home side has no such queue and keeps the defaults.

    /// Channel opens this forward wants now (what the burst rule weighs): clients waiting for
    /// one, and while a burst is on, the pool's refills.
    func channelQueue(now: Double) -> Int

    /// An extra session is up beside the driver's: it may open channels for waiting clients.
    func extraStarted(_ extra: LiveSession, now: Double)

    /// One round on the extra session: opens for waiting clients, its streams' pumps, its pool.
    func driveExtra(_ extra: LiveSession, now: Double)

    /// Connections on the extra session now (`status`: what keeps it up after its burst).
    var connectionsOnExtra: Int { get }
}

extension SessionForward {
    func releaseChannels(on live: LiveSession) {}
    func holds(_ live: LiveSession) -> Bool { false }
    func describe(into snapshot: inout StatusSnapshot) {}
    func takeArrivals() -> Int { 0 }
    var allowsOverlap: Bool { true }
    func channelQueue(now: Double) -> Int { 0 }
    func extraStarted(_ extra: LiveSession, now: Double) {}
    func driveExtra(_ extra: LiveSession, now: Double) {}
    var connectionsOnExtra: Int { 0 }
}
