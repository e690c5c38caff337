/// How many channels to keep open ahead of need: the largest burst of new clients in the
/// last three minutes, 1 to 32, with a browser's six assumed after each session start. A burst
/// is how many clients accepted within one second of each other are open at the same moment (a
/// browser's six, a script's twenty), so a steady stream of one-at-a-time connections counts as 1.
struct PoolDemand {
    static let smallest = 1
    /// Large enough for a script's or an app's burst of twenty to be served from the pool once
    /// it has been seen (a browser's six never reaches it); the pool only grows this far for
    /// users whose own bursts do, and shrinks back three minutes after them.
    static let largest = 32
    static let memory = 180.0
    /// What a new session expects: a browser opens up to six connections to a host at once,
    /// and a session's start (launch, or a reconnect after sleep or a network change) is when
    /// its page comes. Without this, that first burst waited one round trip per connection
    /// (252 ms against `ssh -L`'s 85 at 40 ms RTT); with it the pool is ready for it.
    static let afterSessionStart = 6
    /// The peak burst seen in each minute still remembered.
    private var peaks: [(minute: Int, peak: Int)] = []

    /// A client arrived while `burst` clients (itself included) that came in the last second are open.
    mutating func record(burst: Int, now: Double) {
        let minute = Int(now / 60)
        peaks.removeAll { Double(minute - $0.minute) * 60 > Self.memory }
        if let last = peaks.last, last.minute == minute {
            peaks[peaks.count - 1].peak = max(last.peak, burst)
        } else {
            peaks.append((minute, burst))
        }
    }

    /// A session has started: a browser's burst is expected (`afterSessionStart`) for as long
    /// as a seen burst is remembered.
    mutating func sessionStarted(now: Double) { record(burst: Self.afterSessionStart, now: now) }

    /// The pool size wanted now.
    func size(now: Double) -> Int {
        let minute = Int(now / 60)
        var recent = 0
        for entry in peaks where Double(minute - entry.minute) * 60 <= Self.memory { recent = max(recent, entry.peak) }
        return min(Self.largest, max(Self.smallest, recent))
    }
}
