import CLibSSH2

// libssh2 as the engine's session, channel and listener (Engine/EngineSession.swift): the
// concrete final classes answer the engine's protocols with the calls they already make.

extension SSHChannel: EngineChannel {}

extension RemoteListener: EngineListener {
    /// `libssh2_channel_forward_accept`, as the engine sees it.
    func accept() -> ListenerAccept {
        switch acceptChannel() {
        case .accepted(let channel): return .accepted(channel)
        case .none: return .none
        case .failed(let code): return .failed(code)
        }
    }
}

extension SSHSession: EngineSession {
    /// `libssh2_channel_direct_tcpip_ex`, one non-blocking step.
    func openDirect(host: String, port: Int, originHost: String, originPort: Int) -> ChannelOpen {
        switch openDirectTCPIP(host: host, port: port, originHost: originHost, originPort: originPort) {
        case .opened(let channel): return .opened(channel)
        case .wouldBlock: return .wouldBlock
        case .failed(let error): return .failed(error)
        }
    }

    /// `libssh2_channel_open_ex("session")` with a 64 KiB window, one non-blocking step; its
    /// stderr is dropped by libssh2 instead of queued (`libssh2_channel_handle_extended_data2`).
    func openCommandChannel() -> ChannelOpen {
        let type = "session"
        guard
            let channel = libssh2_channel_open_ex(
                raw, type, UInt32(type.utf8.count), UInt32(64 * 1024), UInt32(32768), nil, 0)
        else {
            let code = lastErrno
            if code == LIBSSH2_ERROR_EAGAIN { return .wouldBlock }
            return .failed(error(code, "libssh2_channel_open_ex(session)"))
        }
        libssh2_channel_handle_extended_data2(channel, LIBSSH2_CHANNEL_EXTENDED_DATA_IGNORE)
        return .opened(SSHChannel(session: self, raw: channel))
    }

    /// `libssh2_channel_forward_listen_ex`, one non-blocking step.
    func requestListen(host: String, port: Int) -> ListenRequest {
        switch self.listen(host: host, port: port) {
        case .listening(let listener): return .listening(listener)
        case .wouldBlock: return .wouldBlock
        case .refused(let policy): return .refused(policy: policy)
        case .failed(let error): return .failed(error)
        }
    }
}

extension SSHConnector: SessionOpener {
    /// `connect`, as the engine's opener: non-blocking, one `send()` per loop round from here on.
    func open(onStage: (StageReport) -> Void) throws -> OpenedSession {
        let established = try self.connect(onStage: onStage)
        established.session.startBatching()
        return OpenedSession(session: established.session, idleChannel: established.idleChannel, info: established.info)
    }
}
