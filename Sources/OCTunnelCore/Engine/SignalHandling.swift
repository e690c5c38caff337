#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) private var signalWakeFD: Int32 = -1
nonisolated(unsafe) private var signalCount: Int32 = 0

/// SIGINT/SIGTERM wake the event loop through its pipe; a second one exits at once. SIGUSR1
/// asks it to reconnect now.
/// SIGPIPE is ignored: every send uses MSG_NOSIGNAL, and nothing may kill the tunnel by it.
public enum SignalHandling {
    /// Routes SIGINT and SIGTERM to `wakeFD` (async-signal-safe `write`).
    static func install(wakeFD: Int32) {
        signalWakeFD = wakeFD
        signalCount = 0
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            signalCount += 1
            if signalCount > 1 { _exit(ExitStatus.interrupted.rawValue) }
            var byte = LoopWake.stop.rawValue
            _ = write(signalWakeFD, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        var reconnect = sigaction()
        reconnect.__sigaction_handler.sa_handler = { _ in
            var byte = LoopWake.reconnect.rawValue
            _ = write(signalWakeFD, &byte, 1)
        }
        sigemptyset(&reconnect.sa_mask)
        reconnect.sa_flags = SA_RESTART
        sigaction(SIGUSR1, &reconnect, nil)
        // A launcher may have left these blocked (threads of a parent's dispatch pool do).
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        sigaddset(&unblock, SIGUSR1)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        ignoreSIGPIPE()
    }

    /// `signal(SIGPIPE, SIG_IGN)`.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
