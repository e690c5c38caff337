import Foundation

// The engine's seam: what `SessionDriver`, the forwards, the stream table and the streams ask of
// an SSH session, its channels and its remote listens. libssh2's `SSHSession`, `SSHChannel` and
// `RemoteListener` are one implementation; Tests/OCTunnelCoreTests/Engine's `MemorySession` is the
// other, in memory, in the spirit of swift-nio's `EmbeddedChannel`. The protocols are
// class-bound, and both implementations are final classes: a call through them is one indirect
// call, nothing boxed, and bytes move through caller buffers as before (docs/architecture.md,
// "The engine's seam").

/// One channel as the engine drives it: a byte stream both ways with EOF and flow control.
protocol EngineChannel: AnyObject {
    /// Reads what arrived (`libssh2_channel_read_ex` on stream 0).
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> IOResult
    /// Writes what the peer's window takes now (`libssh2_channel_write_ex`).
    func write(_ buffer: UnsafeRawPointer, count: Int) -> IOResult
    /// Sends EOF (`libssh2_channel_send_eof`).
    func sendEOF() -> StepResult
    /// Whether data waits for a read, without a system call.
    var hasQueuedData: Bool { get }
    /// Whether the peer sent EOF.
    var isEOF: Bool { get }
    /// Bytes held for the channel, the window the peer may fill, the window we may fill.
    var windows: (queued: Int, receive: Int, send: Int) { get }
    /// What we may still send before the peer adjusts the window.
    var sendWindow: Int { get }
    /// A request the peer must answer (the keepalive's `setenv`): `.done` once answered.
    func probe(setenv name: String, value: String) -> StepResult
    /// Starts `command` on a `session` channel (`exec`); 0 once started, else libssh2's code.
    func exec(_ command: String) -> Int32
    /// Closes and frees the channel; repeat while it would block.
    func free() -> StepResult
}

/// One remote listen (`ssh -R`) as the engine drives it.
protocol EngineListener: AnyObject {
    /// The port the VPS listens on.
    var boundPort: Int { get }
    /// The next connection the VPS opened on the listen, if any.
    func accept() -> ListenerAccept
    /// The VPS stops listening (best effort, on the way out).
    func cancel()
}

/// What one step of accepting a forwarded connection gave.
enum ListenerAccept {
    case accepted(any EngineChannel)
    case none
    case failed(Int32)
}

/// What one step of opening a channel gave.
enum ChannelOpen {
    case opened(any EngineChannel)
    case wouldBlock
    case failed(LibSSH2Error)
}

/// What one step of asking the VPS to listen gave.
enum ListenRequest {
    case listening(any EngineListener)
    case wouldBlock
    /// The VPS said no. `policy` is sshd's debug message when it names a rule, as the VPS
    /// wrote it; nil when it said nothing, as for a busy port.
    case refused(policy: String?)
    case failed(LibSSH2Error)
}

/// One authenticated session as the engine drives it: its socket for the poll, a round's
/// bookkeeping (the batched send, the acknowledgement), its counters, the calls whose state
/// lives in the session (a channel open, a listen: one at a time), and its end.
protocol EngineSession: AnyObject {
    /// The socket the loop polls for this session.
    var socket: OwnedDescriptor { get }
    /// Bytes received so far (any increase proves the server alive).
    var receivedBytes: Int { get }
    /// Bytes sent that still wait for the socket.
    var outgoingBacklog: Int { get }
    /// Whether the socket takes more bytes now.
    var socketTakesMore: Bool { get }
    /// Bytes sent and not yet acknowledged by the peer, if known.
    var unacknowledgedBytes: Int? { get }
    /// Why the last flush failed.
    var outgoingFailure: String { get }
    /// The start of a poll round.
    func newRound()
    /// Writes what the socket takes now; false when it failed.
    func flushOutgoing() -> Bool
    /// The end of a round: acknowledges what it read.
    func acknowledgeReceived()
    /// The error for `code`, with the session's message read now.
    func error(_ code: Int32, _ operation: String) -> LibSSH2Error
    /// One step of opening a `direct-tcpip` channel; repeat with the same arguments while it would block.
    func openDirect(host: String, port: Int, originHost: String, originPort: Int) -> ChannelOpen
    /// One step of opening a `session` channel for a command; repeat while it would block.
    func openCommandChannel() -> ChannelOpen
    /// One step of asking the VPS to listen; repeat with the same arguments while it would block.
    func requestListen(host: String, port: Int) -> ListenRequest
    /// Starts collecting the server's debug messages (they explain a refused listen).
    func collectDebugMessages()
    /// The debug messages received since the last call.
    func takeDebugMessages() -> [String]
    /// Blocking mode (on the way out) or non-blocking.
    func setBlocking(_ blocking: Bool)
    /// The timeout of blocking calls, in milliseconds.
    func setTimeout(milliseconds: Int)
    /// Says goodbye with a reason; best effort.
    func disconnect(reason: String)
    /// Frees the session and closes its socket.
    @discardableResult func close() -> Int32
}
