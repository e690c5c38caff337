import OCTunnelLibc

/// What `poll(2)` watches a descriptor for, and what it found (swift-system's model: a typed
/// option set, so no `POLL…` constant is named above System/; SyscallSeamTests checks it).
public struct PollEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int16

    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// `POLLIN`: bytes (or an end, or a connection to accept) to read.
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// `POLLOUT`: room to write, or a connect finished.
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// `POLLHUP`: the other end hung up.
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    /// `POLLERR`: an error is pending on the descriptor.
    public static let error = PollEvents(rawValue: Int16(POLLERR))
}

extension pollfd {
    /// An entry that polls `descriptor` for `events`.
    init(_ descriptor: OwnedDescriptor, events: PollEvents) {
        self.init(fd: descriptor.number, events: events.rawValue, revents: 0)
    }

    /// What poll found for this entry.
    var found: PollEvents { PollEvents(rawValue: revents) }
}
