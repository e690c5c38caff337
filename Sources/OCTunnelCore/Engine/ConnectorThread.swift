import Foundation

/// Runs a `SessionOpener` (libssh2's `SSHConnector`: blocking resolve, TCP, handshake, host key,
/// authentication) on its own thread, so the loop keeps serving; the result waits in a locked mailbox and the
/// loop is woken to take it. An attempt can be abandoned (the network changed under it): its
/// thread runs out on its own, and what it brings back is closed, never handed over.
final class ConnectorThread: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<OpenedSession, AnyFailure>?
    /// Which attempt is current; a thread whose number is older was abandoned.
    private var generation = 0
    private(set) var isRunning = false
    /// When the current attempt started (monotonic seconds).
    private(set) var startedAt = 0.0

    /// Starts one attempt; `wake` is called (from the thread) when its result is ready.
    func start(
        opener: any SessionOpener, onStage: @escaping @Sendable (StageReport) -> Void,
        wake: @escaping @Sendable () -> Void
    ) {
        isRunning = true
        startedAt = MonotonicClock.now()
        lock.lock()
        generation += 1
        let mine = generation
        lock.unlock()
        let thread = Thread { [self] in
            let outcome: Result<OpenedSession, AnyFailure>
            do { outcome = .success(try opener.open(onStage: onStage)) } catch {
                outcome = .failure(AnyFailure(asFailure(error)))
            }
            if put(outcome, generation: mine) { wake() }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Keeps `value` if its attempt is still the current one; else closes what it opened.
    private func put(_ value: Result<OpenedSession, AnyFailure>, generation attempt: Int) -> Bool {
        lock.lock()
        let current = attempt == generation
        if current { result = value }
        lock.unlock()
        if !current, case .success(let established) = value { established.session.close() }
        return current
    }

    /// Forgets the attempt under way (loop thread only): a new one may start at once.
    /// A result already waiting is closed, never handed over.
    func abandon() {
        lock.lock()
        generation += 1
        let waiting = result
        result = nil
        isRunning = false
        lock.unlock()
        if case .success(let established) = waiting { established.session.close() }
    }

    /// The finished attempt's result, once (loop thread only).
    func take() -> Result<OpenedSession, AnyFailure>? {
        lock.lock(); defer { lock.unlock() }
        guard let value = result else { return nil }
        result = nil
        isRunning = false
        return value
    }
}
