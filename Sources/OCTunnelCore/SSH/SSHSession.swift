import CLibSSH2
import Foundation

/// One libssh2 session on one TCP socket. Owned by one thread at a time: built by the
/// connector, then handed whole to the event loop; nothing above SSH/ sees its pointer.
public final class SSHSession: @unchecked Sendable {
    let raw: OpaquePointer
    /// The TCP socket, the session's own: `close()` shuts and closes it after the free.
    let socket: OwnedDescriptor
    private(set) var isFreed = false
    /// The socket I/O libssh2 calls back into (batched while the event loop drives the session).
    let io: BatchedSocketIO

    /// `libssh2_session_init_ex` with default allocators, plus octunnel's algorithm preferences.
    init(socket: OwnedDescriptor) throws(LibSSH2Error) {
        LibSSH2.ensureInitialized()
        guard let session = libssh2_session_init_ex(nil, nil, nil, nil) else {
            throw LibSSH2Error(
                code: LIBSSH2_ERROR_ALLOC, message: "cannot allocate a session", operation: "libssh2_session_init_ex")
        }
        raw = session
        self.socket = socket
        io = BatchedSocketIO(socket: socket)
        BatchedSocketIO.install(io, on: session)
        LibSSH2Trace.enable(on: session)
        for (method, list) in SSHAlgorithms.preferences(speaking: { LibSSH2.supported($0, on: session) }) {
            let rc = libssh2_session_method_pref(raw, method, list)
            if rc != 0 { throw error(rc, "libssh2_session_method_pref") }
        }
    }

    /// `libssh2_session_method_pref` for host keys: `types` (those octunnel accepts) first, then
    /// its usual order, as OpenSSH asks first for the key types it already knows for a host.
    func preferHostKeys(_ types: [String]) throws(LibSSH2Error) {
        let usual =
            SSHAlgorithms.preferences(speaking: { LibSSH2.supported($0, on: raw) })
            .first { $0.method == LIBSSH2_METHOD_HOSTKEY }.map { $0.list.split(separator: ",").map(String.init) } ?? []
        let first = types.filter(usual.contains)
        guard !first.isEmpty else { return }
        let list = (first + usual.filter { !first.contains($0) }).joined(separator: ",")
        let rc = libssh2_session_method_pref(raw, LIBSSH2_METHOD_HOSTKEY, list)
        if rc != 0 { throw error(rc, "libssh2_session_method_pref") }
    }

    /// The error for return code `code`, with libssh2's message read now.
    func error(_ code: Int32, _ operation: String) -> LibSSH2Error {
        var message: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        libssh2_session_last_error(raw, &message, &length, 0)
        let text = message.map { String(cString: $0) } ?? ""
        return LibSSH2Error(code: code, message: text, operation: operation)
    }

    var lastErrno: Int32 { libssh2_session_last_errno(raw) }

    /// `libssh2_session_set_blocking`; blocking mode also ends write batching.
    func setBlocking(_ blocking: Bool) {
        if blocking { io.setBatching(false) }
        libssh2_session_set_blocking(raw, blocking ? 1 : 0)
    }

    /// Non-blocking mode with one `send()` per loop round (see `BatchedSocketIO`).
    func startBatching() {
        setBlocking(false)
        io.setBatching(true)
    }

    /// Marks the start of a poll round: the socket may be read again.
    func newRound() { io.newRound() }

    /// Writes batched bytes the socket takes now; false when the socket failed.
    func flushOutgoing() -> Bool { io.flush() }

    /// The end of a round: acknowledges what it read, if its own bytes did not (see
    /// `BatchedSocketIO.acknowledgeReceived`).
    func acknowledgeReceived() { io.acknowledgeReceived() }

    /// Why the last flush failed (`send()`'s error text).
    var outgoingFailure: String { io.failureDescription }

    /// Bytes libssh2 has sent that still wait for the socket to become writable.
    var outgoingBacklog: Int { io.backlog }

    /// Whether the socket takes more bytes now; false while the kernel's send buffer is full
    /// (the server is not reading).
    var socketTakesMore: Bool { io.isWritable }

    /// Bytes sent on the socket that the server has not acknowledged yet (the kernel's queue).
    var unacknowledgedBytes: Int? { io.kernelSendQueue }

    /// Bytes received on the socket so far (any increase proves the server alive).
    var receivedBytes: Int { io.receivedBytes }

    /// `libssh2_session_set_timeout`, for blocking calls (milliseconds, 0 = none).
    func setTimeout(milliseconds: Int) { libssh2_session_set_timeout(raw, milliseconds) }

    /// `libssh2_session_handshake` (makes the socket non-blocking underneath).
    func handshake() throws(LibSSH2Error) {
        let rc = libssh2_session_handshake(raw, socket.number)
        if rc != 0 { throw error(rc, "libssh2_session_handshake") }
    }

    /// The server's host key (`libssh2_session_hostkey`).
    func hostKey() -> SSHPublicKey? {
        var length = 0
        var type: Int32 = 0
        guard let pointer = libssh2_session_hostkey(raw, &length, &type), length > 0 else { return nil }
        let blob = pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
        return SSHPublicKey(blob: blob)
    }

    /// The negotiated algorithm of `method` (`libssh2_session_methods`).
    /// The server's SSH identification line once the handshake has read it
    /// (`libssh2_session_banner_get`), shown safely; nil before, or if it was not SSH's.
    var serverBanner: String? {
        guard let line = libssh2_session_banner_get(raw).map({ String(cString: $0) }), line.hasPrefix("SSH-") else {
            return nil
        }
        return OutsideText.shown(line.trimmingCharacters(in: .whitespacesAndNewlines), limit: 255)
    }

    func negotiated(_ method: Int32) -> String {
        libssh2_session_methods(raw, method).map { String(cString: $0) } ?? "?"
    }

    /// The methods the server allows for `user` (`libssh2_userauth_list`); nil once authenticated.
    func authenticationMethods(user: String) -> String? {
        libssh2_userauth_list(raw, user, UInt32(user.utf8.count)).map { String(cString: $0) }
    }

    /// Public-key authentication from an OpenSSH key file (`libssh2_userauth_publickey_fromfile_ex`).
    func authenticate(user: String, privateKeyPath: String) throws(LibSSH2Error) {
        let rc = libssh2_userauth_publickey_fromfile_ex(raw, user, UInt32(user.utf8.count), nil, privateKeyPath, nil)
        if rc != 0 { throw error(rc, "libssh2_userauth_publickey_fromfile_ex") }
    }

    /// Public-key authentication from a key held in memory (`libssh2_userauth_publickey_frommemory`).
    /// `privateKey` is unencrypted OpenSSH text followed by a NUL: libssh2 1.10.0 calls
    /// `strlen` on it while signing (userauth.c:756).
    func authenticate(user: String, privateKey: SecretBuffer) throws(LibSSH2Error) {
        let rc = privateKey.withUnsafeBytes { bytes in
            libssh2_userauth_publickey_frommemory(
                raw, user, user.utf8.count, nil, 0,
                bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count - 1, nil)
        }
        if rc != 0 { throw error(rc, "libssh2_userauth_publickey_frommemory") }
    }

    /// Opens a plain `session` channel (`libssh2_channel_open_ex`), blocking.
    func openSessionChannel() throws(LibSSH2Error) -> SSHChannel {
        let type = "session"
        guard
            let channel = libssh2_channel_open_ex(
                raw, type, UInt32(type.utf8.count),
                UInt32(2 * 1024 * 1024), UInt32(32768), nil, 0)
        else {
            throw error(lastErrno, "libssh2_channel_open_ex(session)")
        }
        return SSHChannel(session: self, raw: channel)
    }

    /// What one step of opening a `direct-tcpip` channel gave.
    enum OpenResult {
        case opened(SSHChannel)
        case wouldBlock
        case failed(LibSSH2Error)
    }

    /// One non-blocking step of `libssh2_channel_direct_tcpip_ex`; repeat with the same
    /// arguments while it would block (its state lives in the session).
    func openDirectTCPIP(host: String, port: Int, originHost: String, originPort: Int) -> OpenResult {
        if let channel = libssh2_channel_direct_tcpip_ex(raw, host, Int32(port), originHost, Int32(originPort)) {
            return .opened(SSHChannel(session: self, raw: channel))
        }
        let code = lastErrno
        if code == LIBSSH2_ERROR_EAGAIN { return .wouldBlock }
        return .failed(error(code, "libssh2_channel_direct_tcpip_ex"))
    }

    /// Says goodbye with a reason (`libssh2_session_disconnect_ex`); best effort.
    func disconnect(reason: String) {
        guard !isFreed else { return }
        _ = libssh2_session_disconnect_ex(raw, SSH_DISCONNECT_BY_APPLICATION, reason, "")
    }

    /// Shuts the socket (so a hung peer cannot block), frees the session and closes the socket.
    /// libssh2's answer: 0 once the session and its channels are freed.
    ///
    /// The free runs blocking and unbatched. A non-blocking `libssh2_session_free` answers
    /// EAGAIN, and frees nothing, as soon as closing a channel or cancelling a listener would
    /// wait for the server (session.c, session_free), and a batched read answers EAGAIN once the
    /// round found the socket empty: every session the loop dropped was lost whole (about
    /// 72 KB and its channels). On the shut socket a blocking wait ends at once: reads find
    /// the end, writes fail, and the free goes on to the end.
    @discardableResult
    public func close() -> Int32 {
        guard !isFreed else { return 0 }
        socket.shutdownBoth()
        setBlocking(true)
        let rc = libssh2_session_free(raw)
        isFreed = true
        socket.close()
        return rc
    }

    deinit { close() }
}
