/// A `direct-tcpip` channel opened before any client asked for it: an idle connection the
/// VPS has opened to the home server, and what the server sent on it first.
final class WarmChannel {
    let channel: SSHChannel
    let openedAt: Double
    /// Bytes the server sent before any client had the channel, delivered to the client first.
    var greeting = PendingBytes()

    init(channel: SSHChannel, openedAt: Double) {
        self.channel = channel
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
    /// Server-first bytes kept per pooled channel; past this the channel is simply not read.
    static let greetingLimit = 64 * 1024
    /// A pooled channel the far side closes sooner than this after its open means that nothing
    /// answers behind the VPS (the home side is down), not an idle timeout.
    static let quickClose = 2.0

    /// `fixedSize` nil: follow demand.
    init(fixedSize: Int?) { self.fixedSize = fixedSize }

    var count: Int { warm.count }

    /// The pool size wanted now.
    func size(now: Double) -> Int { fixedSize ?? demand.size(now: now) }

    /// A session to the VPS has started (see `PoolDemand.sessionStarted`).
    func sessionStarted(now: Double) { demand.sessionStarted(now: now) }

    /// A client came while `burst` clients that came in the last second are open.
    func noteBurst(_ burst: Int, now: Double) { demand.record(burst: burst, now: now) }

    /// Whether to open another pooled channel now.
    func wantsOpen(now: Double) -> Bool { warm.count < size(now: now) && backoff.allows(now: now) }

    /// When the backoff lets the next pool open happen, if one is wanted and held back.
    func nextOpenTime(now: Double) -> Double? {
        guard warm.count < size(now: now), !backoff.allows(now: now) else { return nil }
        return backoff.notBefore
    }

    /// An open is starting with no client waiting for it (one per backoff step while failing).
    func opening(now: Double) { backoff.opened(now: now) }

    /// A channel opened with no client waiting for it.
    func add(_ channel: SSHChannel, now: Double) { warm.append(WarmChannel(channel: channel, openedAt: now)) }

    /// An open failed at the far side (nothing listens, or the forward was refused).
    func openFailed(now: Double) { backoff.failed(now: now) }

    /// Reads server-first bytes and discards channels the far side has closed. Returns true
    /// when one was closed within `quickClose` of its open: nothing answers behind the VPS.
    func tend(_ live: LiveSession, now: Double) -> Bool {
        var farSideDead = false
        var index = 0
        while index < warm.count {
            let pooled = warm[index]
            guard isClosed(pooled, live) else {
                if now - pooled.openedAt >= Self.quickClose { backoff.succeeded() }
                index += 1
                continue
            }
            if now - pooled.openedAt < Self.quickClose {
                farSideDead = true
                backoff.failed(now: now)
            }
            live.release(pooled.channel)
            warm.remove(at: index)
        }
        return farSideDead
    }

    /// A pooled channel the far side has not closed, for a client; nil when none is left.
    func take(_ live: LiveSession, now: Double) -> WarmChannel? {
        while !warm.isEmpty {
            let pooled = warm.removeFirst()
            if isClosed(pooled, live) {
                live.release(pooled.channel)
                continue
            }
            backoff.succeeded()
            return pooled
        }
        return nil
    }

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

    /// The session is gone: its channels with it (nothing to free).
    func clear() { warm.removeAll() }

    /// Drops every pooled channel through `live` (the loop is stopping).
    func release(to live: LiveSession) {
        for pooled in warm { live.release(pooled.channel) }
        warm.removeAll()
    }
}
