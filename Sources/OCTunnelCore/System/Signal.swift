import OCTunnelLibc

/// A signal, named (swift-system's model: no `SIG…` constant above System/; SyscallSeamTests
/// checks it).
public struct Signal: Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `SIGINT`: Ctrl-C.
    public static let interrupt = Signal(rawValue: SIGINT)
    /// `SIGTERM`: asked to stop (a service manager, `kill`).
    public static let terminate = Signal(rawValue: SIGTERM)
    /// `SIGUSR1`: `tunnel reconnect` asks for a new session now.
    public static let reconnect = Signal(rawValue: SIGUSR1)
    /// `SIGPIPE`: a write to a closed socket or pipe.
    public static let brokenPipe = Signal(rawValue: SIGPIPE)
    /// `SIGKILL`.
    public static let kill = Signal(rawValue: SIGKILL)
}
