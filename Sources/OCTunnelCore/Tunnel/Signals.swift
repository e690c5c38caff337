#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) private var signalWakeFD: Int32 = -1
nonisolated(unsafe) private var signalCount: Int32 = 0

/// SIGINT/SIGTERM wake the event loop through its pipe; a second one exits at once.
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
            var byte: UInt8 = UInt8(ascii: "s")
            _ = write(signalWakeFD, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        // A launcher may have left these blocked (threads of a parent's dispatch pool do).
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        ignoreSIGPIPE()
    }

    /// `signal(SIGPIPE, SIG_IGN)`.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
