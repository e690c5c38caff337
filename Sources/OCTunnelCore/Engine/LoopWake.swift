/// Why the event loop's wake-up pipe was written: the byte each reason writes, defined once.
/// Signal handlers write these too, so a reason is a plain byte (async-signal-safe `write`).
enum LoopWake: UInt8, CaseIterable {
    /// Stop cleanly (a stop request, SIGINT, SIGTERM).
    case stop = 0x73 // "s"
    /// Reconnect now (SIGUSR1: `octunnel tunnel reconnect` / `home reconnect`).
    case reconnect = 0x72 // "r"
    /// Only look again: something finished on another thread (a connection attempt).
    case look = 0x63 // "c"
}
