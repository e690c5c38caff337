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
    private let listener: OwnedDescriptor
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
        try Self.prepareDirectory(endpoint.directory.runtimeDirectory, failure)
        guard let address = UnixSocket.address(path) else {
            throw failure("the path is too long for a Unix socket (\(path.utf8.count) bytes); use a shorter --home")
        }
        switch endpoint.probe() {
        case .absent:
            break
        case .stale:
            do { try Syscall.removeFile(path) } catch {
                throw failure("cannot remove the stale socket: \(error.errno)")
            }
        case .answering:
            throw failure(
                "another octunnel \(endpoint.role) (profile \(endpoint.profile)) is running and answers there; this one will not"
            )
        case .untrusted(let reason):
            throw failure("\(reason); it was left in place and is not used")
        }
        // Nothing can connect before listen(): the mode is set in between.
        let socket: (socket: OwnedDescriptor, device: UInt, inode: UInt)
        do {
            socket = try UnixSocket.listen(at: address, path: path, mode: 0o600, backlog: 16)
        } catch  where error.call == "socket" {
            throw failure(error.description)
        } catch {
            throw failure(
                error.errno == .addressInUse && error.call == "bind"
                    ? "another octunnel \(endpoint.role) (profile \(endpoint.profile)) took it first"
                    : error.errno.description)
        }
        (listener, device, inode) = socket
    }

    deinit { stop() }

    /// Creates the runtime directory (0700) or checks an existing one: a real directory of
    /// this user's, tightened to 0700 if it was open to others.
    private static func prepareDirectory(
        _ directory: String, _ failure: (String) -> StatusServerError
    ) throws(StatusServerError) {
        do { try Syscall.makeDirectory(directory, mode: 0o700, existing: true) } catch {
            throw failure("cannot create \(directory): \(error.errno)")
        }
        let found: FileStatus?
        do { found = try Syscall.fileStatus(directory, followingLinks: false) } catch {
            throw failure("\(directory): \(error.errno)")
        }
        guard let info = found else { throw failure("\(directory): \(Errno.noSuchFile)") }
        guard info.kind == .directory else { throw failure("\(directory) is not a directory") }
        guard info.isOwnedByMe else { throw failure("\(directory) is owned by uid \(info.owner), not you") }
        if info.isOpenToOthers {
            do { try Syscall.changeMode(directory, 0o700) } catch {
                throw failure("\(directory) is open to others and chmod 700 failed: \(error.errno)")
            }
        }
    }

    /// Adds the listener to the coming poll (no timer: an idle process still sleeps).
    func register(in set: PollSet) {
        guard !closed else { return }
        set.watch(listener, events: .readable, owner: self, tag: 0)
    }

    func ready(tag: Int, events: PollEvents) { answerWaiting() }

    /// Accepts the clients waiting (at most `answersPerRound`) and answers each with the
    /// snapshot, built once for all of them.
    func answerWaiting() {
        guard !closed else { return }
        var reply: [UInt8]?
        for _ in 0..<answersPerRound {
            guard let client = listener.accept() else { return }
            defer { client.close() }
            // The socket is 0600 in a 0700 directory; this is the second lock on the door.
            guard let uid = client.peerUID, uid == Syscall.effectiveUserID || uid == 0 else { continue }
            if reply == nil {
                guard let snapshot = source?.statusSnapshot(for: endpoint) else { return }
                reply = Array((snapshot.jsonText + "\n").utf8)
            }
            // One non-blocking write; what does not fit is dropped with the client.
            _ = reply!.withUnsafeBytes { client.transmit($0.baseAddress, $0.count, options: .dontWait) }
        }
    }

    /// Stops listening and removes the socket file if it is still the one this server made.
    func stop() {
        guard !closed else { return }
        closed = true
        listener.close()
        UnixSocket.remove(endpoint.path, device: device, inode: inode)
    }
}
