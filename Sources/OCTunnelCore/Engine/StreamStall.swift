/// A stream that stopped moving with bytes waiting on one side and room on the other: what
/// the stall watch reports (`EngineEvent.streamStalled`) before it recovers the stream. It
/// should never happen; when it does, these counters say where the bytes were held.
public struct StreamStall: Sendable, Equatable {
    /// Which way the waiting bytes were going.
    public enum Direction: String, Sendable {
        /// Queued inside libssh2 for the channel, with room on the client socket.
        case toClient
        /// Read from the client and held for the channel, with room in the channel's window.
        case toVPS
    }

    public var id: Int
    public var direction: Direction
    /// How long the stream had not moved (at least the watch's interval).
    public var seconds: Double
    /// Bytes libssh2 holds for this channel (`libssh2_channel_window_read_ex`'s `read_avail`).
    public var queuedInLibSSH2: Int
    /// What the server may still send us, as libssh2 counts it, and what we may still send.
    public var receiveWindow: Int
    public var sendWindow: Int
    /// Bytes the stream holds for the channel (`toVPS`) and for the client socket (`toClient`).
    public var pendingToVPS: Int
    public var pendingToClient: Int
    /// Bytes read from the client and written to it so far.
    public var sent: Int
    public var received: Int
    /// Why the bytes for the VPS were held when the channel last had them offered (`toVPS`):
    /// the send buffer above its mark, or the channel refusing them, and what came in since.
    public var heldBecause: String? = nil

    /// One human line for stderr.
    public var text: String {
        let waiting =
            direction == .toClient
            ? "\(queuedInLibSSH2) bytes from the VPS waiting for the client"
            : "\(pendingToVPS) bytes from the client waiting for the VPS"
        return "connection \(id) stalled for \(Int(seconds)) s with \(waiting) (libssh2 queue \(queuedInLibSSH2), "
            + "receive window \(receiveWindow), send window \(sendWindow), held \(pendingToVPS) up / \(pendingToClient) down, "
            + "\(sent) bytes sent, \(received) received\(heldBecause.map { "; held: \($0)" } ?? "")); moving it again"
    }

    /// The event's JSON object.
    public var jsonObject: [String: Any] {
        [
            "event": "streamStalled", "id": id, "direction": direction.rawValue,
            "seconds": (seconds * 10).rounded() / 10,
            "queuedInLibssh2": queuedInLibSSH2, "receiveWindow": receiveWindow, "sendWindow": sendWindow,
            "pendingToVPS": pendingToVPS, "pendingToClient": pendingToClient, "sent": sent, "received": received,
        ]
        .merging(heldBecause.map { ["heldBecause": $0] } ?? [:]) { first, _ in first }
    }
}
