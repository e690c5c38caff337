/// Paces the pool's opens while the far side fails them (an open refused, or a pooled channel
/// closed by the far side within seconds of its open: nothing answers behind the VPS). Once a
/// failure is known, at most one pool open per step, and each such open that fails doubles
/// the step, from 1 s to 30 s. Failures of channels opened before (a whole pool closed at
/// once) count once. A pooled channel that stays open, or one a client uses, ends it.
struct OpenBackoff {
    static let first = 1.0
    static let longest = 30.0
    private(set) var failures = 0
    /// No pool open before this time.
    private(set) var notBefore: Double = -.infinity
    /// A pool open made while failing, whose outcome is not known yet.
    private var probing = false

    func allows(now: Double) -> Bool { now >= notBefore }

    private func step(_ failures: Int) -> Double {
        min(Self.longest, Self.first * Double(1 << min(max(failures - 1, 0), 5)))
    }

    /// A pool open is starting: while failing, it uses up this step.
    mutating func opened(now: Double) {
        guard failures > 0 else { return }
        notBefore = now + step(failures)
        probing = true
    }

    /// The far side failed an open or closed a fresh pooled channel.
    mutating func failed(now: Double) {
        if failures == 0 {
            failures = 1
            notBefore = now + step(1)
        } else if probing {
            probing = false
            failures += 1
            notBefore = max(notBefore, now + step(failures))
        }
    }

    mutating func succeeded() {
        failures = 0
        probing = false
        notBefore = -.infinity
    }
}
