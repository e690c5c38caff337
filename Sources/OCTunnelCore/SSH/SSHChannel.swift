import CLibSSH2
import Foundation

/// One libssh2 channel; it keeps its session alive, so it can never outlive it.
///
/// Its pointer has one owner, this object, and is gone once `free()` has freed it: every call
/// after that answers `LIBSSH2_ERROR_BAD_USE` without touching libssh2, and a debug build
/// stops there (a freed channel's memory may already hold the next channel; issue 29).
final class SSHChannel {
    let session: SSHSession
    private var handle: OpaquePointer?

    init(session: SSHSession, raw: OpaquePointer) {
        self.session = session
        handle = raw
    }

    /// Whether `free()` has finished (or the session went first).
    var isFreed: Bool { handle == nil }

    /// The channel pointer while it is live; nil (and a debug trap) once it was freed.
    var raw: OpaquePointer? {
        assert(handle != nil, "a channel was used after it was freed")
        return handle
    }

    /// `libssh2_channel_read_ex` on stream 0.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> IOResult {
        guard let raw else { return .failed(LIBSSH2_ERROR_BAD_USE) }
        let rc = libssh2_channel_read_ex(raw, 0, buffer.assumingMemoryBound(to: CChar.self), count)
        if rc > 0 { return .bytes(rc) }
        if rc == LIBSSH2_ERROR_EAGAIN { return .wouldBlock }
        if rc == 0 { return libssh2_channel_eof(raw) != 0 ? .eof : .wouldBlock }
        return .failed(Int32(rc))
    }

    /// `libssh2_channel_write_ex` on stream 0.
    func write(_ buffer: UnsafeRawPointer, count: Int) -> IOResult {
        guard let raw else { return .failed(LIBSSH2_ERROR_BAD_USE) }
        let rc = libssh2_channel_write_ex(raw, 0, buffer.assumingMemoryBound(to: CChar.self), count)
        if rc > 0 { return .bytes(rc) }
        if rc == LIBSSH2_ERROR_EAGAIN || rc == 0 { return .wouldBlock }
        return .failed(Int32(rc))
    }

    /// `libssh2_channel_send_eof`.
    func sendEOF() -> StepResult {
        guard let raw else { return .failed(LIBSSH2_ERROR_BAD_USE) }
        return StepResult(code: libssh2_channel_send_eof(raw))
    }

    /// Whether the session already holds unread data for this channel
    /// (`libssh2_poll_channel_read`): a list scan, no system call.
    var hasQueuedData: Bool { raw.map { libssh2_poll_channel_read($0, 0) != 0 } ?? false }

    /// `libssh2_channel_eof`.
    var isEOF: Bool { raw.map { libssh2_channel_eof($0) != 0 } ?? true }

    /// Flow-control counters: bytes libssh2 holds for this channel and the window the server
    /// may still fill (`libssh2_channel_window_read_ex`, a list scan), and the window we may
    /// still fill (`libssh2_channel_window_write_ex`).
    var windows: (queued: Int, receive: Int, send: Int) {
        guard let raw else { return (0, 0, 0) }
        var queued: UInt = 0
        let receive = libssh2_channel_window_read_ex(raw, &queued, nil)
        let send = libssh2_channel_window_write_ex(raw, nil)
        return (Int(queued), Int(receive), Int(send))
    }

    /// What we may still send before the server adjusts the window (`libssh2_channel_window_write_ex`).
    var sendWindow: Int { raw.map { Int(libssh2_channel_window_write_ex($0, nil)) } ?? 0 }

    /// `libssh2_channel_setenv_ex`, used as a request the server must answer: `.done` once it
    /// has answered, whether it accepted the variable or refused it (OpenSSH's `AcceptEnv`).
    /// While it would block, call it again with the same arguments.
    func probe(setenv name: String, value: String) -> StepResult {
        guard let raw else { return .failed(LIBSSH2_ERROR_BAD_USE) }
        let rc = libssh2_channel_setenv_ex(raw, name, UInt32(name.utf8.count), value, UInt32(value.utf8.count))
        return rc == LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED ? .done : StepResult(code: rc)
    }

    /// `libssh2_channel_free` (closes first). Repeat while it would block; once it is done
    /// (or the session is gone) the pointer is forgotten.
    func free() -> StepResult {
        guard let handle else { return .done }
        guard !session.isFreed else { self.handle = nil; return .done }
        let rc = libssh2_channel_free(handle)
        if rc != LIBSSH2_ERROR_EAGAIN { self.handle = nil }
        return StepResult(code: rc)
    }

    deinit {
        if let handle, !session.isFreed { libssh2_channel_free(handle) }
    }
}
