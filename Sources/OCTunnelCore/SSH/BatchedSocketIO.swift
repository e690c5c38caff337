import CLibSSH2
import Foundation

/// libssh2's socket I/O, replaced (`LIBSSH2_CALLBACK_SEND` / `_RECV`) so that libssh2 never
/// sees a send refused (no packet is ever left half-sent), the loop pays one `send()` per round
/// instead of one per packet, and no `recv()` that is bound to find nothing.
///
/// libssh2 1.10.0 sends every packet with its own `send()` (transport.c:_libssh2_transport_send)
/// and every channel read or write first calls `recv()` until EAGAIN (channel.c:1961, 2018).
/// A packet it could only partly send can be finished only by the same call with the same
/// arguments (transport.c:636); for the packets it builds on its own stack (keepalive, EOF,
/// replies to the server's want-reply requests, forwarded-channel confirmations) that is
/// impossible, and the session wedges with -39. While batching is on:
/// - every send is accepted whole: what the socket does not take now is appended to a buffer
///   the loop flushes when the socket polls writable. The buffer has no fixed size; the loop
///   keeps it bounded by not reading client bytes while `backlog` is above its high-water mark
///   (so it holds at most the mark plus one channel write);
/// - after one `recv()` found the socket empty, later ones in the same round answer EAGAIN
///   at once; the next poll round (`newRound()`) allows real reads again.
/// - at the end of a round that read anything, the socket is told to acknowledge it now
///   (`acknowledgeReceived()`), not after the kernel's delayed-ACK timer.
/// Blocking calls (handshake, authentication, the goodbye) run with batching off.
final class BatchedSocketIO {
    /// The session's TCP socket (the session closes it).
    let socket: OwnedDescriptor
    private(set) var isBatching = false
    private var outgoing: UnsafeMutableRawPointer
    private var capacity = 64 * 1024
    private var start = 0
    private var end = 0
    private var inboundDrained = false
    /// Bytes were read since the last `acknowledgeReceived()`.
    private var unacknowledged = false
    /// The last failure of a real `send()` (a negative errno), reported on the next libssh2 send.
    private var sendFailure: Int = 0

    init(socket: OwnedDescriptor) {
        self.socket = socket
        outgoing = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { outgoing.deallocate() }

    /// Why the socket refused bytes (strerror of the failed `send()`), once it has.
    var failureDescription: String { Errno(rawValue: Int32(-sendFailure)).description }

    /// Bytes accepted from libssh2 and not yet written to the socket.
    var backlog: Int { end - start }

    /// Whether the socket would take more bytes now (`poll` for POLLOUT, without waiting).
    var isWritable: Bool {
        socket.isWritable
    }

    /// Bytes in the kernel's send queue that the peer has not acknowledged (`SIOCOUTQ`), or nil.
    var kernelSendQueue: Int? { socket.unsentBytes }

    /// Bytes received from the socket so far: any increase proves the peer alive.
    private(set) var receivedBytes = 0

    /// The server's `SSH_MSG_DEBUG` messages not yet taken (see `SSHSession.takeDebugMessages`).
    var debugMessages: [String] = []

    /// Turns batching on for the non-blocking event loop, or off (after flushing) for blocking calls.
    func setBatching(_ on: Bool) {
        if !on { flushBlocking() }
        isBatching = on
        inboundDrained = false
    }

    /// A new poll round: the socket may hold data again.
    func newRound() { inboundDrained = false }

    /// Writes what the socket takes now; false on a socket error (the session is then dead).
    @discardableResult
    func flush() -> Bool {
        sending: while start < end {
            switch socket.transmit(outgoing + start, end - start) {
            case .moved(let sent):
                start += sent
            case .again:
                break sending
            case .end:
                sendFailure = -Int(Errno.brokenPipe.rawValue)
                start = end
            case .failed(let error):
                sendFailure = -Int(error.rawValue)
                start = end
            }
        }
        if start == end { start = 0; end = 0 }
        return sendFailure == 0
    }

    /// Sends the ACK for what this round read now, unless the round's own bytes carried it.
    ///
    /// sshd does not set TCP_NODELAY on a session without a terminal, so Nagle holds its next
    /// small packet until the previous one is acknowledged. A tunnel often has nothing to send
    /// back (a response on one channel, then another channel's open confirmation), and Linux
    /// delays that ACK by at least 40 ms: measured with a pooled channel on loopback, 1 request
    /// in 1,000 waited 40 ms, a quarter of the request rate. TCP_QUICKACK sends the pending ACK
    /// and leaves delayed-ACK mode for what comes next; it is not permanent, so it is set again
    /// after every round that read.
    func acknowledgeReceived() {
        guard unacknowledged else { return }
        unacknowledged = false
        socket.acknowledgeNow()
    }

    /// Flushes whatever is left, waiting for the socket up to about 0.3 s (it is only used on the way out).
    private func flushBlocking() {
        var waits = 0
        while backlog > 0 && sendFailure == 0 && waits < 3 {
            flush()
            if backlog == 0 { break }
            socket.waitWritable(milliseconds: 100)
            waits += 1
        }
        start = 0; end = 0
    }

    /// Takes all `length` bytes into the buffer (the loop sends them at the end of its round).
    /// Never answers EAGAIN while batching.
    func send(_ buffer: UnsafeRawPointer, _ length: Int, _ flags: Int32) -> Int {
        guard isBatching else { return Self.libssh2Answer(socket.transmit(buffer, length, flags: flags)) }
        if sendFailure != 0 { return sendFailure }
        append(buffer, length)
        return length
    }

    private func append(_ buffer: UnsafeRawPointer, _ length: Int) {
        if end + length > capacity {
            if start > 0 {
                outgoing.copyMemory(from: UnsafeRawPointer(outgoing + start), byteCount: end - start)
                end -= start
                start = 0
            }
            if end + length > capacity {
                var grown = capacity * 2
                while grown < end + length { grown *= 2 }
                let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
                bigger.copyMemory(from: outgoing, byteCount: end)
                outgoing.deallocate()
                outgoing = bigger
                capacity = grown
            }
        }
        (outgoing + end).copyMemory(from: buffer, byteCount: length)
        end += length
    }

    func recv(_ buffer: UnsafeMutableRawPointer, _ length: Int, _ flags: Int32) -> Int {
        if isBatching && inboundDrained { return -Int(Errno.wouldBlock.rawValue) }
        let received = socket.receive(buffer, length, flags: flags)
        if case .moved(let count) = received {
            receivedBytes &+= count
            unacknowledged = true
        } else if received == .again {
            inboundDrained = true
        }
        return Self.libssh2Answer(received)
    }

    /// A receive on a socket libssh2 names that is not the session's (the agent's): the libssh2
    /// boundary, where the number is libssh2's and so is the closing.
    private static func plainRecv(
        _ socket: libssh2_socket_t, _ buffer: UnsafeMutableRawPointer, _ length: Int, _ flags: Int32
    ) -> Int {
        libssh2Answer(Syscall.receive(socket, buffer, length, flags: flags))
    }

    /// A send on a socket libssh2 names that is not the session's (see `plainRecv`).
    private static func plainSend(
        _ socket: libssh2_socket_t, _ buffer: UnsafeRawPointer, _ length: Int, _ flags: Int32
    ) -> Int {
        libssh2Answer(Syscall.transmit(socket, buffer, length, flags: flags))
    }

    /// A transfer as libssh2's callbacks answer: the count, 0 at the end, or minus the error
    /// number (EAGAIN for `.again`).
    private static func libssh2Answer(_ transfer: Syscall.Transfer) -> Int {
        switch transfer {
        case .moved(let count): return count
        case .end: return 0
        case .again: return -Int(Errno.wouldBlock.rawValue)
        case .failed(let error): return -Int(error.rawValue)
        }
    }

    /// libssh2's `LIBSSH2_SEND_FUNC` and `LIBSSH2_RECV_FUNC`: socket, buffer, length, flags, and
    /// the session's abstract pointer (here the `BatchedSocketIO`).
    private typealias SendFunction =
        @convention(c) (
            libssh2_socket_t, UnsafeRawPointer?, Int, Int32, UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        ) -> Int
    private typealias RecvFunction =
        @convention(c) (
            libssh2_socket_t, UnsafeMutableRawPointer?, Int, Int32, UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        ) -> Int

    /// The `BatchedSocketIO` a callback's abstract pointer holds (`install` put it there).
    private static func owner(_ abstract: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> BatchedSocketIO {
        Unmanaged<BatchedSocketIO>.fromOpaque(abstract!.pointee!).takeUnretainedValue()
    }

    /// Installs the callbacks on `session`; `io` must live as long as the session.
    static func install(_ io: BatchedSocketIO, on session: OpaquePointer) {
        libssh2_session_abstract(session).pointee = Unmanaged.passUnretained(io).toOpaque()
        // libssh2's ssh-agent client talks to the agent's socket through these callbacks too.
        let sendCallback: SendFunction = { fd, buffer, length, flags, abstract in
            let io = BatchedSocketIO.owner(abstract)
            guard fd == io.socket.number else { return BatchedSocketIO.plainSend(fd, buffer!, length, flags) }
            return io.send(buffer!, length, flags)
        }
        let recvCallback: RecvFunction = { fd, buffer, length, flags, abstract in
            let io = BatchedSocketIO.owner(abstract)
            guard fd == io.socket.number else { return BatchedSocketIO.plainRecv(fd, buffer!, length, flags) }
            return io.recv(buffer!, length, flags)
        }
        _ = libssh2_session_callback_set(
            session, LIBSSH2_CALLBACK_SEND, unsafeBitCast(sendCallback, to: UnsafeMutableRawPointer.self))
        _ = libssh2_session_callback_set(
            session, LIBSSH2_CALLBACK_RECV, unsafeBitCast(recvCallback, to: UnsafeMutableRawPointer.self))
    }
}
