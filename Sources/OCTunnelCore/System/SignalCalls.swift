import OCTunnelLibc

/// The number `wakeFromSignalHandler` writes to: a plain global, as a signal handler may touch
/// nothing that counts references or takes a lock.
nonisolated(unsafe) private var signalWakeNumber: Int32 = -1

/// sigaction and friends: the handler sits in a union that Glibc calls `__sigaction_handler`
/// and Darwin `__sigaction_u`.
extension Syscall {
    /// A C signal handler: async-signal-safe calls only (`write`, `_exit`, `tcsetattr`, `raise`).
    typealias SignalHandler = @convention(c) (Int32) -> Void

    /// `sigaction(2)`: runs `handler` for `signal`, with an empty mask; `restarting` (`SA_RESTART`)
    /// resumes a blocked call after it, else that call returns EINTR. Returns the action it replaced.
    @discardableResult
    static func setSignalHandler(_ signal: Signal, restarting: Bool = false, _ handler: SignalHandler) -> sigaction {
        setSignalHandler(signal.rawValue, flags: restarting ? SA_RESTART : 0, handler)
    }

    /// `sigaction(2)` by number, for System/'s own (TerminalReader's handlers re-raise the number they get).
    @discardableResult
    static func setSignalHandler(_ signal: Int32, flags: Int32 = 0, _ handler: SignalHandler) -> sigaction {
        var action = sigaction()
        Platform.setHandler(&action, handler)
        sigemptyset(&action.sa_mask)
        action.sa_flags = flags
        var old = sigaction()
        system_sigaction(signal, &action, &old)
        return old
    }

    /// Makes `wake` the descriptor `wakeFromSignalHandler` writes to. Its owner keeps it open
    /// for as long as handlers that write to it are installed.
    static func setSignalWake(_ wake: OwnedDescriptor) { signalWakeNumber = wake.number }

    /// `write(2)` of one byte to the signal wake, for signal handlers (async-signal-safe: no
    /// retry, nothing checked, no reference counting).
    static func wakeFromSignalHandler(_ byte: UInt8) {
        var byte = byte
        _ = Platform.write(signalWakeNumber, &byte, 1)
    }

    /// `kill(pid, 0)`: whether process `pid` exists (EPERM: it does, as another user's).
    static func processExists(_ pid: Int32) -> Bool {
        system_kill(pid, 0) == 0 || Errno.current == .notPermitted
    }

    /// `kill(2)`: sends `signal` to `pid`.
    static func kill(_ pid: Int32, _ signal: Signal) throws(Errno) {
        guard system_kill(pid, signal.rawValue) == 0 else { throw .current }
    }

    /// `sigaction(2)`: puts back an action `setSignalHandler` returned.
    static func restoreSignalAction(_ signal: Int32, _ saved: sigaction) {
        var action = saved
        system_sigaction(signal, &action, nil)
    }

    /// `signal(SIG_DFL)`: the default action again (from a handler, before re-raising).
    static func defaultSignalAction(_ signal: Int32) {
        Platform.signal(signal, SIG_DFL)
    }

    /// `signal(SIG_IGN)`.
    static func ignoreSignal(_ signal: Signal) {
        Platform.signal(signal.rawValue, SIG_IGN)
    }

    /// `pthread_sigmask(SIG_UNBLOCK)`: a launcher may have left `signals` blocked (threads of a
    /// parent's dispatch pool do).
    static func unblockSignals(_ signals: [Signal]) {
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in signals { sigaddset(&unblock, signal.rawValue) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }
}

/// `sigaction(2)` itself (qualified, `Glibc.sigaction` would name the struct).
private func system_sigaction(
    _ signal: Int32, _ action: UnsafePointer<sigaction>, _ old: UnsafeMutablePointer<sigaction>?
) {
    _ = sigaction(signal, action, old)
}

/// `kill(2)` by its C name, beside `Syscall.kill`.
private func system_kill(_ pid: Int32, _ signal: Int32) -> Int32 { kill(pid, signal) }
