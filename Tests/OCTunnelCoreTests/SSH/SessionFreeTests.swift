import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A session that ends is given back whole: libssh2 frees it and its channels. On a
/// non-blocking session `libssh2_session_free` answers EAGAIN, and frees nothing, as soon as
/// closing a channel would wait for the server (session.c, session_free); the event loop's
/// sessions are non-blocking and batched, so every reconnect lost the session's 72 KB and its
/// channels (heaptrack on the soak: the live heap grew by one session per reconnect).
@Suite("a session that ends is freed whole, against the real sshd", .ownThreads, .timeLimit(.minutes(2)))
struct SessionFreeTests {
    /// A session to the test sshd with `channels` direct-tcpip channels open to an echo server,
    /// in the event loop's mode (non-blocking, batched), after a round whose read found nothing.
    static func sessionAsTheLoopLeavesIt(
        channels count: Int, in home: TempDirectory, sshd: SSHDServer, echo: TCPTestServer
    )
        throws -> (SSHSession, [SSHChannel])
    {
        let store = KeyStore(directory: OctunnelDirectory(path: home.file("oct")))
        let settings = ConnectionSettings(
            target: SSHTarget(user: "root", host: "127.0.0.1", port: sshd.port),
            authentication: .keyFile(store.privateKeyPath), knownHostsPath: home.file("known_hosts"))
        let established = try SSHConnector(settings: settings).connect()
        let session = established.session
        var channels = [established.idleChannel]
        for _ in 0..<count {
            guard
                case .opened(let channel) = session.openDirectTCPIP(
                    host: "127.0.0.1", port: echo.port, originHost: "127.0.0.1", originPort: 1)
            else {
                throw LibSSH2Error(code: session.lastErrno, message: "direct-tcpip did not open", operation: "test")
            }
            channels.append(channel)
        }
        session.startBatching()
        session.newRound()
        var byte: UInt8 = 0
        // nothing has come: the round's socket is drained
        for channel in channels { _ = channel.read(into: &byte, count: 1) }
        return (session, channels)
    }

    @Test("a batched, non-blocking session with open channels is freed when it is dropped", arguments: [0, 3])
    func droppedSessionIsFreed(channels count: Int) async throws {
        let home = try TempDirectory("octunnel-session-free")
        let store = KeyStore(directory: OctunnelDirectory(path: home.file("oct")))
        let key = try store.generate(comment: "session-free", rotate: false).publicKey
        let sshd = try SSHDServer(authorizedKeys: [key.line])
        defer { sshd.stop() }
        let echo = try TCPTestServer.echo()
        defer { echo.stop() }
        let rc = try await offPool {
            let (session, channels) = try Self.sessionAsTheLoopLeavesIt(
                channels: count, in: home, sshd: sshd, echo: echo)
            #expect(!session.isFreed && channels.allSatisfy { !$0.isFreed })
            let rc = session.close()
            // The session's pointer is gone, and each channel forgets its own at its next call
            // without touching libssh2 (which freed it with the session: a use would be after free).
            #expect(session.isFreed)
            for channel in channels {
                _ = channel.free()
                #expect(channel.isFreed, "a channel kept its pointer after its session was freed")
            }
            return rc
        }
        #expect(rc == 0, "libssh2_session_free answered \(rc): the session and its channels were never freed")
    }
}
