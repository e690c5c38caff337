import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A socket and a channel each have one owner; once it closes or frees them, nothing reaches
/// the old number or pointer (issue 29). A descriptor number is reused by the next socket at
/// once, so a second close, or a late read or write, would reach somebody else's connection.
@Suite("ownership: closed descriptors and freed channels stay out of reach", .ownThreads)
struct OwnershipTests {
    /// A connected pair of stream sockets.
    private func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    private func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) != -1 }

    @Test("a stream's socket is closed once: closing the stream again never closes the socket that reused its number")
    func streamClosesOnce() throws {
        let (mine, peer) = try socketPair()
        defer { close(peer) }
        let stream = ForwardedStream(id: 1, socket: OwnedDescriptor(mine), now: 0)
        stream.close(releasingTo: nil)
        #expect(!stream.socket.isOpen)
        #expect(!isOpen(mine))
        // The next socket the process makes takes the lowest free number: usually the one just
        // freed. Whatever number it gets, closing the stream again must leave it open.
        let (next, nextPeer) = try socketPair()
        defer { close(next); close(nextPeer) }
        stream.close(releasingTo: nil)
        _ = stream.finish(releasingTo: nil, reason: nil)
        #expect(isOpen(next) && isOpen(nextPeer), "a second close of the stream closed a socket it no longer owns")
    }

    @Test("a closed descriptor's number reads -1 in a release build, and a debug build stops at the read")
    func closedDescriptorIsOutOfReach() async throws {
        let (mine, peer) = try socketPair()
        defer { close(peer) }
        let owned = OwnedDescriptor(mine)
        #expect(owned.number == mine)
        owned.close()
        owned.close()
        #expect(!owned.isOpen)
        #expect(!isOpen(mine))
        await #expect(processExitsWith: .failure, "reading a closed descriptor's number must stop a debug build") {
            let (fd, other) = try! { () throws -> (Int32, Int32) in
                var fds: [Int32] = [0, 0]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0
                else { throw POSIXError(.EMFILE) }
                return (fds[0], fds[1])
            }()
            _ = other
            let descriptor = OwnedDescriptor(fd)
            descriptor.close()
            _ = descriptor.number
        }
    }

    @Test("a freed channel is never read or written: every call answers BAD_USE, and a debug build stops at it")
    func freedChannelIsOutOfReach() async throws {
        await #expect(processExitsWith: .failure, "a read on a freed channel must stop a debug build") {
            // A real channel needs a session; the check fires before libssh2 is called, so a
            // channel whose session never connected shows it: free it, then read.
            let fds = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
            _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, fds)
            let session = try! SSHSession(socket: OwnedDescriptor(fds[0]))
            let channel = SSHChannel(session: session, raw: OpaquePointer(bitPattern: 1)!)
            session.close()
            _ = channel.free()
            var byte: UInt8 = 0
            _ = channel.read(into: &byte, count: 1)
        }
    }
}
