import Foundation

/// What a forward counts for `status` beyond its open streams: the bytes of streams already
/// finished, and its own last failure (a refused forward, nothing listening on the VPS).
struct ForwardCounters {
    /// Client → VPS and VPS → client bytes of finished streams.
    private(set) var finishedSent = 0
    private(set) var finishedReceived = 0
    private(set) var lastError: (text: String, at: Date)?

    mutating func finished(_ stream: ForwardedStream) {
        finishedSent += stream.sent
        finishedReceived += stream.received
    }

    mutating func failed(_ text: String) { lastError = (text, Date()) }

    /// Fills one forward's `bytesOut`/`bytesIn` (finished streams plus `open`) and its last failure.
    func describe(into forward: inout StatusSnapshot.ForwardStatus, open: some Collection<ForwardedStream>) {
        forward.bytesOut = open.reduce(finishedSent) { $0 + $1.sent }
        forward.bytesIn = open.reduce(finishedReceived) { $0 + $1.received }
        forward.lastError = lastError?.text
    }
}
