import Foundation

/// A `direct-tcpip` channel opened before any client asked for it: an idle connection the
/// VPS has opened to the home server, and what the server sent on it first.
final class WarmChannel {
    let channel: any EngineChannel
    /// The session it is on: the client that takes it stays there.
    let session: LiveSession
    let openedAt: Double
    /// Bytes the server sent before any client had the channel, delivered to the client first.
    var greeting = PendingBytes()

    init(channel: any EngineChannel, session: LiveSession, openedAt: Double) {
        self.channel = channel
        self.session = session
        self.openedAt = openedAt
    }
}

/// Channels opened ahead of need, so a new client's bytes leave at once instead of waiting a
/// round trip for its channel (libssh2 1.10.0 opens one channel at a time per session).
///
/// Its size follows demand (`PoolDemand`) unless fixed (`--warm N`; 0 turns it off). Each round
/// it reads what the server sent first on every pooled channel, so a channel the far side has
/// closed (a server's idle timeout, the home side restarting) shows as EOF and is discarded,
/// never handed to a client; a replacement is opened at the pace of `OpenBackoff`.
final class ChannelPool {
    private let fixedSize: Int?
    private var demand = PoolDemand()
    private var backoff = OpenBackoff()
    private var warm: [WarmChannel] = []
    /// The far side closed a pooled channel that had sat idle (not a quick close): it closes idle
    /// connections (nginx after 60 s), so refilling the whole pool only buys the next close after
    /// as long, a few wake-ups each, for ever (issue 56: 2.23 a second after a burst of 20). Until
    /// a client comes, a pool that follows demand keeps one channel.
    private var idleClosed = false
    /// When clients took pooled channels, within `BurstRule.poolHelp` (a burst's use of the pool):
    /// the pool's shortfall counts as a queue only up to what clients took (`shortfallFromClients`),
    /// not what a session start (a reconnect's empty pool) left to fill.
    private var takenAt: [Double] = []
    /// Pooled channels a burst's extra session handed back as its burst ended: not opened again on
    /// the driver's session until a client comes (each would be one more idle connection to close).
    private var handedBack = 0
    /// Server-first bytes kept per pooled channel; past this the channel is simply not read.
    static let greetingLimit = 64 * 1024
    /// A pooled channel the far side closes sooner than this after its open means that nothing
    /// answers behind the VPS (the home side is down), not an idle timeout.
    static let quickClose = 2.0

    /// `fixedSize` nil: follow demand.
    init(fixedSize: Int?) { self.fixedSize = fixedSize }

    var count: Int { warm.count }

    /// The pool size wanted now.
    func size(now: Double) -> Int {
        if let fixedSize { return fixedSize }
        let wanted = demand.size(now: now)
        return idleClosed ? min(1, wanted) : max(min(1, wanted), wanted - handedBack)
    }

    /// A session to the VPS has started (see `PoolDemand.sessionStarted`): its pool starts empty,
    /// which is a refill, not a burst.
    func sessionStarted(now: Double) {
        idleClosed = false
        handedBack = 0
        takenAt.removeAll()
        demand.sessionStarted(now: now)
    }

    /// The pool's shortfall that clients made within `BurstRule.poolHelp` of `now`: what a burst
    /// took and the refill has not yet put back (issue 56: a reconnect's empty pool is not one).
    func shortfallFromClients(now: Double) -> Int {
        takenAt.removeAll { now - $0 >= BurstRule.poolHelp }
        return min(max(0, size(now: now) - warm.count), takenAt.count)
    }

    /// A client came while `burst` clients that came in the last second are open.
    func noteBurst(_ burst: Int, now: Double) {
        idleClosed = false
        handedBack = 0
        demand.record(burst: burst, now: now)
    }

    /// Whether to open another pooled channel now, with `inFlight` opens under way that will land in it.
    func wantsOpen(now: Double, inFlight: Int = 0) -> Bool {
        warm.count + inFlight < size(now: now) && backoff.allows(now: now)
    }

    /// When the backoff lets the next pool open happen, if one is wanted and held back.
    func nextOpenTime(now: Double) -> Double? {
        guard warm.count < size(now: now), !backoff.allows(now: now) else { return nil }
        return backoff.notBefore
    }

    /// An open is starting with no client waiting for it (one per backoff step while failing).
    func opening(now: Double) { backoff.opened(now: now) }

    /// A channel opened with no client waiting for it.
    func add(_ channel: any EngineChannel, on live: LiveSession, now: Double) {
        warm.append(WarmChannel(channel: channel, session: live, openedAt: now))
    }

    /// An open failed at the far side (nothing listens, or the forward was refused).
    func openFailed(now: Double) { backoff.failed(now: now) }

    /// Reads server-first bytes and discards channels the far side has closed. Returns true
    /// when one was closed within `quickClose` of its open: nothing answers behind the VPS.
    func tend(_ live: LiveSession, now: Double) -> Bool {
        var farSideDead = false
        var index = 0
        while index < warm.count {
            let pooled = warm[index]
            guard pooled.session === live else { index += 1; continue }
            guard isClosed(pooled, live) else {
                if now - pooled.openedAt >= Self.quickClose { backoff.succeeded() }
                index += 1
                continue
            }
            if now - pooled.openedAt < Self.quickClose {
                farSideDead = true
                backoff.failed(now: now)
            } else {
                idleClosed = true
            }
            live.release(pooled.channel)
            warm.remove(at: index)
        }
        if idleClosed { dropSurplus(on: live, now: now) }
        return farSideDead
    }

    /// The far side closes idle channels: the pooled ones beyond the size wanted now go at once,
    /// oldest first, in one round (issue 56: each left to its own idle close woke the loop again).
    private func dropSurplus(on live: LiveSession, now: Double) {
        while warm.count > size(now: now), let oldest = warm.firstIndex(where: { $0.session === live }) {
            live.release(warm.remove(at: oldest).channel)
        }
    }

    /// A burst's extra session is done with its pool: its pooled channels are freed and not
    /// replaced on the driver's session until a client comes.
    func handBack(from extra: LiveSession) {
        let count = count(on: extra)
        guard count > 0 else { return }
        release(to: extra)
        handedBack += count
    }

    /// A pooled channel the far side has not closed, on a session still alive that is `allowed`
    /// (the client stays on the one its channel is on), for a client; nil when none is left.
    func take(now: Double, on allowed: (LiveSession) -> Bool = { _ in true }) -> WarmChannel? {
        var index = 0
        while index < warm.count {
            let pooled = warm[index]
            guard pooled.session.isAlive, allowed(pooled.session) else { index += 1; continue }
            warm.remove(at: index)
            if isClosed(pooled, pooled.session) {
                pooled.session.release(pooled.channel)
                continue
            }
            backoff.succeeded()
            if takenAt.count < 64 { takenAt.append(now) }
            return pooled
        }
        return nil
    }

    /// Pooled channels on `live`.
    func count(on live: LiveSession) -> Int { warm.count { $0.session === live } }

    /// Drains what the server sent (up to `greetingLimit`) so that EOF is not masked by
    /// unread data, then asks libssh2 whether the far side sent EOF or close.
    private func isClosed(_ pooled: WarmChannel, _ live: LiveSession) -> Bool {
        let channel = pooled.channel
        let scratch = live.scratch
        while pooled.greeting.count < Self.greetingLimit && channel.hasQueuedData {
            let room = min(scratch.size, Self.greetingLimit - pooled.greeting.count)
            switch channel.read(into: scratch.pointer, count: room) {
            case .bytes(let count):
                pooled.greeting.append(UnsafeRawBufferPointer(start: scratch.pointer, count: count))
                continue
            case .eof, .failed:
                return true
            case .wouldBlock:
                break
            }
            break
        }
        return channel.isEOF
    }

    /// The session is gone: its channels with it (nothing to free); `only` nil: every session.
    func clear(only lost: LiveSession? = nil) { warm.removeAll { lost == nil || $0.session === lost } }

    /// Drops every pooled channel on `live` to be freed (the loop is stopping, or an extra
    /// session is about to close).
    func release(to live: LiveSession) {
        for pooled in warm where pooled.session === live { live.release(pooled.channel) }
        warm.removeAll { $0.session === live }
    }
}
