#if canImport(Glibc)
import Glibc
#endif

/// Bytes waiting to go one way: only what the other side could not take yet.
struct PendingBytes {
    private var storage: [UInt8] = []
    private var offset = 0

    var count: Int { storage.count - offset }
    var isEmpty: Bool { offset == storage.count }

    mutating func set(_ bytes: UnsafeRawBufferPointer) {
        storage = Array(bytes)
        offset = 0
    }

    mutating func consume(_ n: Int) {
        offset += n
        if offset >= storage.count {
            storage = []
            offset = 0
        }
    }

    func withHead<T>(_ body: (UnsafeRawPointer, Int) -> T) -> T {
        storage.withUnsafeBytes { body($0.baseAddress! + offset, count) }
    }
}

/// One forwarded client: its socket, its channel, and the state of each direction.
final class ForwardedConnection {
    let id: Int
    let fd: Int32
    let peer: (host: String, port: Int)
    let acceptedAt: Double
    var channel: SSHChannel?
    /// client → channel bytes the channel has not taken yet.
    var upstream = PendingBytes()
    /// channel → client bytes the client has not taken yet.
    var downstream = PendingBytes()
    var clientEOF = false
    var eofSent = false
    var channelEOF = false
    var clientShut = false
    var failed: String?
    var sent = 0
    var received = 0

    init(id: Int, fd: Int32, acceptedAt: Double) {
        self.id = id
        self.fd = fd
        self.acceptedAt = acceptedAt
        self.peer = Sockets.peerDescription(of: fd)
    }

    /// Both directions are finished, or something broke.
    var isDone: Bool { failed != nil || (eofSent && clientShut) }
}
