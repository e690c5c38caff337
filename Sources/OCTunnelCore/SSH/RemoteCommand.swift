import CLibSSH2

/// One command run on the VPS through its own `session` channel (`exec`), driven a step at a
/// time from the event loop: open, start, read stdout to EOF, and hand the channel back to be
/// freed. The home side runs the forced command's verbs this way (`PortReclaimProgram`).
/// The session must have no other channel open pending (libssh2 keeps one open's state per
/// session, channel.c:144); the home side opens no other channel.
final class RemoteCommand {
    /// Where the command stands after a step.
    enum State: Equatable {
        case running
        /// Its standard output, whole (up to `limit` bytes), once the VPS sent EOF.
        case finished(String)
        /// It could not be run: the VPS refused the channel or the exec (`libssh2` code).
        case refused(Int32)
        /// It did not finish by its deadline.
        case timedOut(String)
    }

    let command: String
    let deadline: Double
    private let limit = 4096
    private var channel: (any EngineChannel)?
    private var started = false
    private var output: [UInt8] = []
    private(set) var state = State.running

    init(command: String, deadline: Double) {
        self.command = command
        self.deadline = deadline
    }

    /// One step; a session-level failure fails `live`. Finished commands release their channel.
    @discardableResult
    func step(_ live: LiveSession, now: Double) -> State {
        guard state == .running else { return state }
        if now >= deadline { return finish(.timedOut(String(decoding: output, as: UTF8.self)), live: live) }
        if channel == nil {
            // The open's state lives in the session: it waits for its turn (`LiveSession.takeTurn`).
            guard live.takeTurn(self) else { return state }
            switch live.session.openCommandChannel() {
            case .wouldBlock: return state
            case .failed(let error): return failed(error.code, live: live)
            case .opened(let opened):
                live.endTurn(self)
                channel = opened
            }
        }
        guard let channel else { return state }
        if !started {
            let rc = channel.exec(command)
            if rc == LIBSSH2_ERROR_EAGAIN { return state }
            if rc != 0 { return failed(rc, live: live) }
            started = true
        }
        while true {
            switch channel.read(into: live.scratch.pointer, count: live.scratch.size) {
            case .bytes(let count):
                let room = max(0, limit - output.count)
                output += UnsafeRawBufferPointer(start: live.scratch.pointer, count: min(count, room))
            case .wouldBlock:
                return state
            case .eof:
                return finish(.finished(String(decoding: output, as: UTF8.self)), live: live)
            case .failed(let code):
                return failed(code, live: live)
            }
        }
    }

    /// Writes `bytes` to the running command's stdin (`libssh2_channel_write_ex`); false when
    /// it cannot take them now (not started yet, its window full, or over). A session-level
    /// failure fails `live`.
    @discardableResult
    func write(_ bytes: [UInt8], live: LiveSession) -> Bool {
        guard state == .running, started, let channel else { return false }
        switch bytes.withUnsafeBytes({ channel.write($0.baseAddress!, count: $0.count) }) {
        case .bytes(let count):
            return count == bytes.count
        case .wouldBlock, .eof:
            return false
        case .failed(let code):
            if LibSSH2Error.isSessionLevel(code) { live.fail(code) }
            return false
        }
    }

    private func failed(_ code: Int32, live: LiveSession) -> State {
        if LibSSH2Error.isSessionLevel(code) { live.fail(code) }
        return finish(.refused(code), live: live)
    }

    private func finish(_ end: State, live: LiveSession) -> State {
        live.endTurn(self)
        state = end
        if let channel { live.release(channel) }
        channel = nil
        return state
    }

    /// Drops the channel without a word (the session is gone).
    func abandon() {
        channel = nil
        if state == .running { state = .timedOut("") }
    }
}

extension SSHChannel {
    /// `libssh2_channel_process_startup(channel, "exec", command)`; 0, EAGAIN (repeat with the
    /// same command) or an error code.
    func exec(_ command: String) -> Int32 {
        let request = "exec"
        guard let raw else { return LIBSSH2_ERROR_BAD_USE }
        return libssh2_channel_process_startup(
            raw, request, UInt32(request.utf8.count), command, UInt32(command.utf8.count))
    }
}
