import Foundation

nonisolated(unsafe) private var signalCount: Int32 = 0

/// SIGINT/SIGTERM wake the event loop through its pipe; a second one exits at once. SIGUSR1
/// asks it to reconnect now.
/// SIGPIPE is ignored: every send goes through `Syscall.sendNoSignal`, and nothing may kill
/// the tunnel by it.
public enum SignalHandling {
    /// Routes SIGINT, SIGTERM and SIGUSR1 to `wake` (async-signal-safe `write`).
    static func install(wake: OwnedDescriptor) {
        Syscall.setSignalWake(wake)
        signalCount = 0
        let stop: Syscall.SignalHandler = { _ in
            signalCount += 1
            if signalCount > 1 { Syscall.exitNow(ExitStatus.interrupted.rawValue) }
            Syscall.wakeFromSignalHandler(LoopWake.stop.rawValue)
        }
        Syscall.setSignalHandler(.interrupt, stop)
        Syscall.setSignalHandler(.terminate, stop)
        Syscall.setSignalHandler(.reconnect, restarting: true) { _ in
            Syscall.wakeFromSignalHandler(LoopWake.reconnect.rawValue)
        }
        Syscall.unblockSignals([.interrupt, .terminate, .reconnect])
        ignoreSIGPIPE()
    }

    /// `signal(SIGPIPE, SIG_IGN)`.
    public static func ignoreSIGPIPE() {
        Syscall.ignoreSignal(.brokenPipe)
    }
}
