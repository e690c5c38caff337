import Foundation

/// Runs `SSHConnector.connect` (blocking: resolve, TCP, handshake, host key, authentication)
/// on its own thread, so the loop keeps serving; the result waits in a locked mailbox and the
/// loop is woken to take it.
final class ConnectorThread: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<EstablishedSession, OCTunnelError>?
    private(set) var isRunning = false

    /// Starts one attempt; `wake` is called (from the thread) when its result is ready.
    func start(settings: ConnectionSettings, onStage: @escaping @Sendable (StageReport) -> Void,
               wake: @escaping @Sendable () -> Void) {
        isRunning = true
        let connector = SSHConnector(settings: settings)
        let thread = Thread { [self] in
            let outcome = Result<EstablishedSession, OCTunnelError> { () throws(OCTunnelError) -> EstablishedSession in
                try connector.connect(onStage: onStage)
            }
            put(outcome)
            wake()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func put(_ value: Result<EstablishedSession, OCTunnelError>) {
        lock.lock(); defer { lock.unlock() }
        result = value
    }

    /// The finished attempt's result, once (loop thread only).
    func take() -> Result<EstablishedSession, OCTunnelError>? {
        lock.lock(); defer { lock.unlock() }
        guard let value = result else { return nil }
        result = nil
        isRunning = false
        return value
    }
}
