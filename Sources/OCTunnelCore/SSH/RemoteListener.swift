import CLibSSH2

/// One remote listen on the VPS (`ssh -R`): the `LIBSSH2_LISTENER` that
/// `libssh2_channel_forward_listen_ex` returned. Like a channel, it keeps its session alive and
/// does nothing once that session has been freed (libssh2 frees its listeners with it).
final class RemoteListener {
    let session: SSHSession
    private let raw: OpaquePointer
    /// The port the VPS listens on.
    let boundPort: Int
    private(set) var isCancelled = false

    init(session: SSHSession, raw: OpaquePointer, boundPort: Int) {
        self.session = session
        self.raw = raw
        self.boundPort = boundPort
    }

    /// What one step of accepting a forwarded connection gave.
    enum AcceptResult {
        case accepted(SSHChannel)
        case none
        case failed(Int32)
    }

    /// `libssh2_channel_forward_accept`: the next `forwarded-tcpip` channel the VPS opened
    /// (libssh2 has already confirmed it). Any error but EAGAIN means the session is broken
    /// (it surfaces as -23, channel.c:767-773).
    func acceptChannel() -> AcceptResult {
        guard !isCancelled, !session.isFreed else { return .none }
        if let channel = libssh2_channel_forward_accept(raw) {
            return .accepted(SSHChannel(session: session, raw: channel))
        }
        let code = session.lastErrno
        return code == LIBSSH2_ERROR_EAGAIN || code == 0 ? .none : .failed(code)
    }

    /// `libssh2_channel_forward_cancel`: the VPS stops listening and frees the port. Best effort,
    /// on a blocking session with a short timeout (the goodbye).
    func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        guard !session.isFreed else { return }
        _ = libssh2_channel_forward_cancel(raw)
    }
}

extension SSHSession {
    /// What one step of asking the VPS to listen gave.
    enum ListenResult {
        case listening(RemoteListener)
        case wouldBlock
        /// The VPS said no (-32). `policy` is sshd's debug message when it names a rule
        /// ("Server has disabled port forwarding."), as the VPS wrote it (`listenForbidden`'s message
        /// shows it through `OutsideText`); nil when it said nothing, as for a busy port.
        case refused(policy: String?)
        case failed(LibSSH2Error)
    }

    /// One non-blocking step of `libssh2_channel_forward_listen_ex(host, port)`; repeat with the
    /// byte-identical arguments while it would block (libssh2 keeps the first call's copy of
    /// `host`, channel.c:555-567). `queue` 0 keeps every forwarded connection until accepted.
    func listen(host: String, port: Int, queue: Int32 = 0) -> ListenResult {
        var bound: Int32 = 0
        if let listener = libssh2_channel_forward_listen_ex(raw, host, Int32(port), &bound, queue) {
            return .listening(RemoteListener(session: self, raw: listener, boundPort: bound > 0 ? Int(bound) : port))
        }
        let code = lastErrno
        if code == LIBSSH2_ERROR_EAGAIN { return .wouldBlock }
        if code == LIBSSH2_ERROR_REQUEST_DENIED {
            let messages = takeDebugMessages()
            return .refused(policy: messages.last { Self.isForwardingPolicy($0) })
        }
        return .failed(error(code, "libssh2_channel_forward_listen_ex"))
    }

    /// Whether sshd's debug message says a rule forbids the listen: "Server has disabled port
    /// forwarding." (serverloop.c: AllowTcpForwarding, a `restrict` key without
    /// `port-forwarding`) or "port forwarding refused" (channels.c: not in `permitlisten`).
    static func isForwardingPolicy(_ message: String) -> Bool {
        message.lowercased().contains("port forwarding")
    }

    /// Starts collecting the server's `SSH_MSG_DEBUG` messages (`LIBSSH2_CALLBACK_DEBUG`): sshd
    /// explains a policy refusal of a remote listen that way, and says nothing for a busy port.
    func collectDebugMessages() {
        let callback:
            @convention(c) (
                OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, Int32,
                UnsafeMutablePointer<UnsafeMutableRawPointer?>?
            ) -> Void = {
                _, _, message, length, _, _, abstract in
                guard let abstract, let pointer = abstract.pointee, let message, length > 0 else { return }
                let io = Unmanaged<BatchedSocketIO>.fromOpaque(pointer).takeUnretainedValue()
                let bytes = UnsafeRawBufferPointer(start: message, count: Int(length))
                io.debugMessages.append(String(decoding: bytes, as: UTF8.self))
                if io.debugMessages.count > 16 { io.debugMessages.removeFirst() }
            }
        _ = libssh2_session_callback_set(
            raw, LIBSSH2_CALLBACK_DEBUG, unsafeBitCast(callback, to: UnsafeMutableRawPointer.self))
    }

    /// The debug messages received since the last call.
    func takeDebugMessages() -> [String] {
        defer { io.debugMessages.removeAll() }
        return io.debugMessages
    }
}
