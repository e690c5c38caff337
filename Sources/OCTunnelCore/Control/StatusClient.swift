import Foundation

/// `tunnel status` / `home status`: asks the running process through its status socket and
/// never starts anything. A socket that is not this user's, or that nothing accepts on (left by
/// a killed process), is not trusted: that is "not running".
public struct StatusClient: Sendable {
    public let endpoint: StatusEndpoint
    /// How long the process may take to answer.
    public var timeout: Double

    public init(endpoint: StatusEndpoint, timeout: Double = 3) {
        self.endpoint = endpoint
        self.timeout = timeout
    }

    /// The running process's snapshot. Throws `notRunning` (exit 3) when none runs, and
    /// `statusNotAnswered` (69) when one accepted but gave no status in time.
    public func query() throws -> StatusSnapshot { try exchange().snapshot }

    /// `query`, with the answering process's id as the kernel tells it (`SO_PEERCRED`).
    func exchange() throws -> (snapshot: StatusSnapshot, peer: Int32?) {
        let role = endpoint.role, profile = endpoint.profile
        let socket: OwnedDescriptor
        switch endpoint.probe() {
        case .absent:
            throw StatusError.notRunning(role: role, profile: profile, detail: nil)
        case .stale:
            let command = "octunnel \(role.upCommand.joined(separator: " "))"
            throw StatusError.notRunning(
                role: role, profile: profile,
                detail:
                    "the status socket \(endpoint.path) was left by a process that ended (the next `\(command)` replaces it)"
            )
        case .untrusted(let reason):
            throw StatusError.notRunning(
                role: role, profile: profile, detail: "\(endpoint.path) is not trusted: \(reason)")
        case .answering(let connected):
            socket = connected
        }
        defer { socket.close() }
        let peer = socket.peerPID
        let text = try readReply(socket)
        guard let snapshot = StatusSnapshot(jsonText: text) else {
            throw StatusError.statusNotAnswered(
                path: endpoint.path, reason: text.isEmpty ? "it closed without a status" : "its answer is not a status")
        }
        return (snapshot, peer)
    }

    /// Reads until the server closes (one JSON line), within `timeout`, at most 1 MiB.
    private func readReply(_ socket: OwnedDescriptor) throws -> String {
        let deadline = MonotonicClock.now() + timeout
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let left = deadline - MonotonicClock.now()
            guard left > 0 else {
                throw StatusError.statusNotAnswered(path: endpoint.path, reason: "no answer within \(Int(timeout)) s")
            }
            let ready: Bool
            do { ready = try socket.waitReadable(milliseconds: Int32((left * 1000).rounded(.up))) } catch {
                throw StatusError.statusNotAnswered(path: endpoint.path, reason: "poll: \(error)")
            }
            guard ready else { continue }
            let count = socket.read(&buffer, buffer.count) // EINTR retried there
            guard count > 0 else { break }
            bytes.append(contentsOf: buffer[..<count])
            guard bytes.count <= 1 << 20 else {
                throw StatusError.statusNotAnswered(path: endpoint.path, reason: "its answer is too long")
            }
        }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
