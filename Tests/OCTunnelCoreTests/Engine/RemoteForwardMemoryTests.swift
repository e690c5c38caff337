import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The home side's forward against the in-memory session: the VPS (played by the test) grants
/// the listen and opens `forwarded-tcpip` channels; home is a real echo server on loopback.
@Suite("RemoteForward over an in-memory session", .ownThreads)
struct RemoteForwardMemoryTests {
    /// A `home up` with one forward from the VPS's 127.0.0.1:18080 to `homePort` here.
    static func home(to homePort: Int) throws -> MemoryRounds {
        let target = SSHTarget(user: "me", host: "127.0.0.1", port: 22)
        let connection = ConnectionSettings(
            target: target, authentication: .keyFile("/nonexistent"), knownHostsPath: "/nonexistent")
        let forward = Forward(
            direction: .remote, listen: HostPort(host: "127.0.0.1", port: 18080),
            target: HostPort(host: "127.0.0.1", port: homePort), isOpenCode: true)
        let options = HomeForwardOptions(connection: connection, forwards: [forward])
        return try MemoryRounds { emit in
            [try RemoteForward(forward, index: 0, options: options, emit: emit, forbidden: { _ in }, wake: {})]
        }
    }

    @Test(
        "the VPS listens, opens a channel, and its bytes go to the home port and back; the listen is asked one call at a time"
    )
    func forwardedBothWays() throws {
        let echo = try TCPTestServer.echo()
        defer { echo.stop() }
        let rounds = try Self.home(to: echo.port)
        defer { rounds.stop() }
        rounds.session.openDelay = 0.01
        rounds.start()
        let session = rounds.session
        #expect(try rounds.run { !session.listeners.isEmpty })
        let channel = session.listeners[0].connect()
        channel.deliver(Array("ping".utf8))
        #expect(try rounds.run { channel.written == Array("ping".utf8) })
        channel.deliverEOF()
        #expect(try rounds.run { channel.isFreed })
        #expect(rounds.said.contains { if case .listening = $0 { true } else { false } })
        #expect(session.misuses.isEmpty)
    }

    @Test("nothing listens at home: the VPS's client gets a 502 and its channel is freed once the client closes")
    func homeDown() throws {
        let closed = try Sockets.listen(bind: "127.0.0.1", port: 0)
        let port = closed.port
        closed.socket.close()
        let rounds = try Self.home(to: port)
        defer { rounds.stop() }
        rounds.start()
        let session = rounds.session
        #expect(try rounds.run { !session.listeners.isEmpty })
        let channel = session.listeners[0].connect()
        channel.deliver(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(try rounds.run { channel.eofSent })
        #expect(String(decoding: channel.written, as: UTF8.self).hasPrefix("HTTP/1.1 502"))
        channel.deliverEOF()
        #expect(try rounds.run { channel.isFreed })
    }
}
