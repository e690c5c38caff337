import Foundation
import OCTunnelTestSupport
import Testing

extension TunnelFixture {
    /// `tunnel up` on the laptop (`launcher`) to the VPS port `remotePort` a home already listens
    /// on, once a byte-checked request through it came back whole (`before` names the moment in
    /// a failure): the tunnel, which the caller stops, and its local port. A failure stops it first.
    func laptopServed(
        remotePort: Int, launcher: [String], scratch: TempDirectory, before moment: String
    ) async throws
        -> (tunnel: RunningProcess, port: Int)
    {
        let tunnel = try up(remotePort: remotePort, launcher: launcher)
        do {
            let port = try #require(try await offPool { tunnel.forwardedPort(timeout: 30) }, "\(tunnel.stderrText)")
            let first = try await offPool { try bytesThroughProblem(launcher: launcher, port: port, scratch: scratch) }
            try #require(first == nil, "through the laptop before \(moment): \(first ?? "")")
            return (tunnel, port)
        } catch {
            tunnel.stopGracefullyOrKill()
            throw error
        }
    }
}
