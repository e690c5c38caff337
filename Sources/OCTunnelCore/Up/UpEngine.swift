/// What `TunnelUp` and `HomeUp` do alike around their engine: the status socket, and the run
/// whose failure is emitted before it is thrown.
protocol UpEngine {
    func serveStatus(at endpoint: StatusEndpoint) throws(StatusServerError)
    func handleSignals()
    func run() throws(OCTunnelError)
}

extension TunnelEngine: UpEngine {}
extension HomeEngine: UpEngine {}

extension UpEngine {
    /// Serves `status` at `endpoint`; a socket it cannot serve is a warning that ends
    /// "; `unseen`", and the engine runs without.
    func serveStatus(at endpoint: StatusEndpoint, unseen: String, emit: (UpEvent) -> Void) {
        do {
            try serveStatus(at: endpoint)
        } catch {
            emit(.engine(.warning("\(error); \(unseen)")))
        }
    }

    /// Handles SIGINT and SIGTERM, then runs; a failure retrying cannot fix is emitted as
    /// `.failed`, then thrown.
    func run(emit: (UpEvent) -> Void) throws(OCTunnelError) {
        handleSignals()
        do throws(OCTunnelError) {
            try run()
        } catch {
            emit(.failed(error))
            throw error
        }
    }
}
