import Foundation

/// What the session driver remembers across sessions for `status`: how many sessions came
/// up, the last one's algorithms and host key, since when it is up, and why the last ended.
struct SessionRecord {
    private(set) var sessions = 0
    private(set) var info: SessionInfo?
    private(set) var connectedSince: Date?
    private(set) var lastError: (end: SessionEnd, at: Date)?
    var stopping = false
    /// The last roaming event's line, for `status`.
    private(set) var lastNetworkEvent: (text: String, at: Date)?

    mutating func roamed(_ text: String) { lastNetworkEvent = (text, Date()) }

    mutating func started(_ info: SessionInfo) {
        sessions += 1
        self.info = info
        connectedSince = Date()
    }

    /// A session ended or an attempt failed, for `end`.
    mutating func failed(_ end: SessionEnd) {
        connectedSince = nil
        lastError = (end, Date())
    }
}
