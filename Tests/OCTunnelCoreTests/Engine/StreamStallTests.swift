import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("stalled streams: the event and the status count", .ownThreads)
struct StreamStallTests {
    static let stall = StreamStall(
        id: 17, direction: .toClient, seconds: 1.04, queuedInLibSSH2: 1_835_008,
        receiveWindow: 1_835_008, sendWindow: 0, pendingToVPS: 544, pendingToClient: 0,
        sent: 16_217_088, received: 3_994_624)

    @Test("the event names the connection, where the bytes wait and every counter, as text and JSON")
    func event() throws {
        let event = EngineEvent.streamStalled(Self.stall)
        #expect(!event.isVerbose)
        #expect(
            event.text
                == "warning: connection 17 stalled for 1 s with 1835008 bytes from the VPS waiting for the client "
                + "(libssh2 queue 1835008, receive window 1835008, send window 0, held 544 up / 0 down, 16217088 bytes sent, "
                + "3994624 received); moving it again")
        let object = event.jsonObject
        #expect(object["event"] as? String == "streamStalled")
        #expect(object["direction"] as? String == "toClient")
        #expect(object["id"] as? Int == 17)
        #expect(object["seconds"] as? Double == 1.0)
        #expect(object["queuedInLibssh2"] as? Int == 1_835_008)
        #expect(object["receiveWindow"] as? Int == 1_835_008)
        #expect(object["sendWindow"] as? Int == 0)
        #expect(object["pendingToVPS"] as? Int == 544)
        #expect(object["pendingToClient"] as? Int == 0)
        var up = Self.stall
        up.direction = .toVPS
        #expect(EngineEvent.streamStalled(up).text.contains("544 bytes from the client waiting for the VPS"))
        #expect(object["heldBecause"] == nil)
        up.heldBecause = "the send buffer was above its mark (300000 bytes wait for the socket now)"
        #expect(
            EngineEvent.streamStalled(up).text.hasSuffix(
                "3994624 received; held: the send buffer was above its mark (300000 bytes wait for the socket now)); moving it again"
            ))
        #expect(EngineEvent.streamStalled(up).jsonObject["heldBecause"] as? String == up.heldBecause)
    }

    @Test("status counts stalls: in JSON always, in the text only when there were some")
    func statusCount() throws {
        var snapshot = StatusSnapshot(
            role: .tunnel, profile: .default, pid: 1, state: .connected,
            target: try SSHTarget.parse("you@vps.example.com"))
        #expect(snapshot.jsonObject["stalls"] as? Int == 0)
        #expect(!snapshot.humanLines().contains { $0.contains("stalls") })
        snapshot.stalls = 3
        let decoded = try #require(StatusSnapshot(jsonText: snapshot.jsonText))
        #expect(decoded.stalls == 3)
        #expect(decoded == snapshot)
        #expect(snapshot.humanLines().contains { $0.hasPrefix("  stalls") && $0.contains("3 stalled connection(s)") })
    }
}
