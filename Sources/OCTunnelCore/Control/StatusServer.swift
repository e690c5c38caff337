import Foundation

/// Whoever knows what to say when `status` asks: the session driver.
protocol StatusSource: AnyObject {
    /// The snapshot as of now (called on the loop thread, only when a client connected).
    func statusSnapshot(for endpoint: StatusEndpoint) -> StatusSnapshot
}

/// Why a process cannot answer `status` (it runs on without; the caller says this once).
public struct StatusServerError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "status socket \(path): \(reason)" }
}

/// The status socket, hosted by the event loop at no cost: its listener is one more descriptor
/// in the round's poll (no timer), and each client that connects is answered at once with one
/// JSON line and closed. The reply is written once, without blocking; whatever the client does
/// not take is dropped with it, so a client that never reads cannot hold the loop or memory.
/// The client sends nothing.
final class StatusServer: PollOwner {
    let endpoint: StatusEndpoint
    private weak var source: StatusSource?
    private let listener: Int32
    /// The socket file this server made: it removes only that one, never a successor's.
    private let device: UInt
    private let inode: UInt
    private var closed = false
    /// Connections answered per poll round at most: a flood cannot keep the loop from its forward.
    private let answersPerRound = 32

    /// Binds `endpoint.path` (mode 0600, in a 0700 directory). A socket left by a process that
    /// is gone (nothing accepts on it) is replaced; a live one, or anything that is not this
    /// user's socket, is left alone and reported.
    init(endpoint: StatusEndpoint, source: StatusSource) throws(StatusServerError) {
        self.endpoint = endpoint
        self.source = source
        let path = endpoint.path
        func failure(_ reason: String) -> StatusServerError { StatusServerError(path: path, reason: reason) }
        try Self.prepareDirectory(endpoint.home.runtimeDirectory, failure)
        guard let address = UnixSocket.address(path) else {
            throw failure("the path is too long for a Unix socket (\(path.utf8.count) bytes); use a shorter --home")
        }
        switch endpoint.probe() {
        case .absent:
            break
        case .stale:
            guard unlink(path) == 0 || errno == ENOENT else { throw failure("cannot remove the stale socket: \(String(cString: strerror(errno)))") }
        case .answering(let fd):
            Syscall.close(fd)
            throw failure("another octunnel \(endpoint.role) (profile \(endpoint.profile)) is running and answers there; this one will not")
        case .untrusted(let reason):
            throw failure("\(reason); it was left in place and is not used")
        }
        let fd: Int32
        do { fd = try UnixSocket.make() } catch { throw failure(error.description) }
        // Nothing can connect before listen(): the mode is set in between.
        guard UnixSocket.withAddress(address, { bind(fd, $0, $1) }) == 0 else {
            let reason = errno == EADDRINUSE ? "another octunnel \(endpoint.role) (profile \(endpoint.profile)) took it first" : String(cString: strerror(errno))
            Syscall.close(fd)
            throw failure(reason)
        }
        var info = stat()
        guard chmod(path, 0o600) == 0, lstat(path, &info) == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            Syscall.close(fd)
            unlink(path)
            throw failure(reason)
        }
        Sockets.setNonBlocking(fd, true)
        listener = fd
        device = UInt(info.st_dev)
        inode = UInt(info.st_ino)
    }

    deinit { stop() }

    /// Creates the runtime directory (0700) or checks an existing one: a real directory of
    /// this user's, tightened to 0700 if it was open to others.
    private static func prepareDirectory(_ directory: String, _ failure: (String) -> StatusServerError) throws(StatusServerError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw failure("cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw failure("\(directory): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw failure("\(directory) is not a directory") }
        guard info.st_uid == geteuid() else { throw failure("\(directory) is owned by uid \(info.st_uid), not you") }
        if info.st_mode & 0o077 != 0 && chmod(directory, 0o700) != 0 {
            throw failure("\(directory) is open to others and chmod 700 failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Adds the listener to the coming poll (no timer: an idle process still sleeps).
    func register(in set: PollSet) {
        guard !closed else { return }
        set.watch(listener, events: Int32(POLLIN), owner: self, tag: 0)
    }

    func ready(tag: Int, events: Int16) { answerWaiting() }

    /// Accepts the clients waiting (at most `answersPerRound`) and answers each with the
    /// snapshot, built once for all of them.
    func answerWaiting() {
        guard !closed else { return }
        var reply: [UInt8]?
        for _ in 0..<answersPerRound {
            let client = Syscall.accept(listener)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            defer { Syscall.close(client) }
            Syscall.setCloseOnExec(client)
            // The socket is 0600 in a 0700 directory; this is the second lock on the door.
            guard let uid = UnixSocket.peerUID(client), uid == geteuid() || uid == 0 else { continue }
            if reply == nil {
                guard let snapshot = source?.statusSnapshot(for: endpoint) else { return }
                reply = Array((snapshot.jsonText + "\n").utf8)
            }
            // One non-blocking write; what does not fit is dropped with the client.
            _ = reply!.withUnsafeBytes { Syscall.sendNoSignal(client, $0.baseAddress, $0.count, flags: Int32(MSG_DONTWAIT)) }
        }
    }

    /// Stops listening and removes the socket file if it is still the one this server made.
    func stop() {
        guard !closed else { return }
        closed = true
        Syscall.close(listener)
        var info = stat()
        if lstat(endpoint.path, &info) == 0, UInt(info.st_dev) == device, UInt(info.st_ino) == inode {
            unlink(endpoint.path)
        }
    }
}
