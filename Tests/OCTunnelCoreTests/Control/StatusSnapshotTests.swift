import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("StatusSnapshot: what status says, as JSON and for people", .ownThreads)
struct StatusSnapshotTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func connected() throws -> StatusSnapshot {
        var snapshot = StatusSnapshot(
            role: .tunnel, profile: .default, pid: 4242, state: .connected,
            target: try SSHTarget.parse("you@vps.example.com"))
        snapshot.hostKey = "SHA256:" + String(repeating: "A", count: 43)
        snapshot.hostKeyType = "ssh-ed25519"
        snapshot.cipher = "aes128-ctr"
        snapshot.mac = "hmac-sha2-256"
        snapshot.kex = "curve25519-sha256"
        snapshot.connectedSince = now.addingTimeInterval(-(3 * 3600 + 12 * 60 + 5))
        snapshot.local = HostPort(host: "127.0.0.1", port: 4096)
        snapshot.remote = HostPort(host: "127.0.0.1", port: 18080)
        snapshot.openConnections = 4
        snapshot.totalConnections = 31
        snapshot.bytesIn = 1_300_000
        snapshot.bytesOut = 2048
        snapshot.reconnects = 2
        snapshot.noteError("connection to VPS lost (Connection reset by peer)", at: now.addingTimeInterval(-3600 * 4))
        snapshot.health = .init(
            ok: true, version: "1.4.7", checkedAt: now.addingTimeInterval(-20), detail: "OpenCode 1.4.7 (API 1)")
        return snapshot
    }

    @Test(
        "several forwards: the list round-trips through the JSON, and the text has a forwarding line for each beside OpenCode's, with its counts and last error"
    )
    func forwardsList() throws {
        var snapshot = try Self.connected()
        snapshot.forwards = [
            .init(
                Forward(
                    direction: .local, listen: HostPort(host: "127.0.0.1", port: 4096),
                    target: HostPort(host: "127.0.0.1", port: 18080),
                    isOpenCode: true),
                openConnections: 4, totalConnections: 30, bytesIn: 1_300_000, bytesOut: 2000),
            .init(
                Forward(
                    direction: .local, listen: HostPort(host: "127.0.0.1", port: 3000),
                    target: HostPort(host: "::1", port: 18081)),
                openConnections: 0, totalConnections: 1, bytesIn: 2048, bytesOut: 48,
                lastError: "nothing listens on VPS [::1]:18081"),
        ]
        let decoded = try #require(StatusSnapshot(jsonText: snapshot.jsonText))
        #expect(decoded.forwards == snapshot.forwards)
        let lines = snapshot.humanLines(now: Self.now)
        #expect(
            lines.contains(
                "  forwarding  127.0.0.1:3000 → VPS [::1]:18081 · 1 connection · 2.0 KiB in · last error: nothing listens on VPS [::1]:18081"
            ),
            "\(lines)")
        #expect(lines.filter { $0.hasPrefix("  forwarding") }.count == 2, "\(lines)")
        // A status from before the list: none, and the text as it was.
        var object = snapshot.jsonObject
        object["forwards"] = nil
        let older = try #require(StatusSnapshot(jsonText: jsonLine(object)))
        #expect(
            older.forwards.isEmpty && older.humanLines(now: Self.now).filter { $0.hasPrefix("  forwarding") }.count == 1
        )
    }

    @Test(
        "each forward says its listen, its target and whether it is OpenCode's; its local and remote stay this machine's end and the VPS's; a status from before listen and target reads by its role"
    )
    func forwardEnds() throws {
        var snapshot = StatusSnapshot(
            role: .home, profile: .default, pid: 1, state: .connected, target: try SSHTarget.parse("you@vps"))
        let vps = HostPort(host: "127.0.0.1", port: 18080)
        let home = HostPort(host: "127.0.0.1", port: 4096)
        snapshot.forwards = [
            .init(Forward(direction: .remote, listen: vps, target: home, isOpenCode: true)),
            .init(
                Forward(
                    direction: .remote, listen: HostPort(host: "127.0.0.1", port: 18081),
                    target: HostPort(host: "127.0.0.1", port: 3000))),
        ]
        let items = try #require(snapshot.jsonObject["forwards"] as? [[String: Any]])
        #expect(items[0]["listen"] as? String == "127.0.0.1:18080" && items[0]["target"] as? String == "127.0.0.1:4096")
        #expect(items[0]["remote"] as? String == "127.0.0.1:18080" && items[0]["local"] as? String == "127.0.0.1:4096")
        #expect(items.map { $0["openCode"] as? Bool } == [true, false])
        #expect(StatusSnapshot(jsonText: snapshot.jsonText)?.forwards == snapshot.forwards)
        let older = items.map { $0.filter { !["listen", "target", "openCode"].contains($0.key) } }
        var object = snapshot.jsonObject
        object["forwards"] = older
        #expect(StatusSnapshot(jsonText: jsonLine(object))?.forwards == snapshot.forwards)
    }

    @Test(
        "permissions waiting (issue 48): round-trip through the JSON, a 'waiting' row when some wait, null and no row when nothing is followed"
    )
    func permissionsWaiting() throws {
        var snapshot = try Self.connected()
        #expect(snapshot.jsonText.contains("\"permissionsWaiting\":null"))
        #expect(!snapshot.humanLines(now: Self.now).contains { $0.hasPrefix("  waiting") })
        snapshot.permissionsWaiting = 3
        let decoded = try #require(StatusSnapshot(jsonText: snapshot.jsonText))
        #expect(decoded.permissionsWaiting == 3)
        #expect(
            decoded.humanLines(now: Self.now).contains(
                "  waiting     3 for an answer (permission requests and questions)"),
            "\(decoded.humanLines(now: Self.now))")
        snapshot.permissionsWaiting = 0
        #expect(!snapshot.humanLines(now: Self.now).contains { $0.hasPrefix("  waiting") })
    }

    @Test("the JSON round-trips, with the event stream's names and null for what is unknown")
    func jsonRoundTrip() throws {
        let snapshot = try Self.connected()
        let text = snapshot.jsonText
        #expect(!text.contains("\n"))
        let decoded = try #require(StatusSnapshot(jsonText: text))
        #expect(decoded.state == .connected)
        #expect(decoded.hostKey == snapshot.hostKey)
        #expect(decoded.local == snapshot.local && decoded.remote == snapshot.remote)
        #expect(decoded.bytesIn == 1_300_000 && decoded.openConnections == 4 && decoded.reconnects == 2)
        #expect(decoded.health?.version == "1.4.7")
        #expect(abs(decoded.connectedSince!.timeIntervalSince(snapshot.connectedSince!)) < 0.001)
        #expect(text.contains("\"status\":\"connected\""))
        #expect(text.contains("\"localPort\":4096"))
        #expect(text.contains("\"hostKey\":\"SHA256:"))

        let fresh = StatusSnapshot(
            role: .home, profile: try ProfileName("work"), pid: 1, state: .connecting,
            target: try SSHTarget.parse("root@[::1]:2222"))
        let freshText = fresh.jsonText
        for key in ["hostKey", "cipher", "connectedSince", "local", "remote", "lastError", "health"] {
            #expect(freshText.contains("\"\(key)\":null"), "\(key) in \(freshText)")
        }
        let back = try #require(StatusSnapshot(jsonText: freshText))
        #expect(
            back.target.host == "::1" && back.target.port == 2222 && back.role == .home
                && back.profile.rawValue == "work")
        #expect(StatusSnapshot(jsonText: "{\"state\":\"connected\"}") == nil)
        #expect(StatusSnapshot(jsonText: "not json") == nil)
    }

    @Test("the newer failure wins lastError")
    func newerErrorWins() throws {
        var snapshot = try Self.connected()
        snapshot.noteError("older", at: Self.now.addingTimeInterval(-3600 * 5))
        #expect(snapshot.lastError == "connection to VPS lost (Connection reset by peer)")
        snapshot.noteError("nothing listens on VPS 127.0.0.1:18080", at: Self.now)
        #expect(snapshot.lastError == "nothing listens on VPS 127.0.0.1:18080")
    }

    @Test("for people: one summary line, then aligned details")
    func humanLines() throws {
        let lines = try Self.connected().humanLines(now: Self.now)
        #expect(
            lines[0]
                == "connected to vps.example.com for 3 h 12 min · 4 open connections · OpenCode 1.4.7 healthy 20 s ago")
        #expect(lines.contains("  forwarding  127.0.0.1:4096 → VPS 127.0.0.1:18080"))
        #expect(lines.contains("  traffic     31 connections since start · 1.2 MiB in · 2.0 KiB out"))
        #expect(lines.contains("  reconnects  2 · last error: connection to VPS lost (Connection reset by peer)"))
        #expect(lines.contains("  process     pid 4242 · profile default"))
        // Values start in one column.
        #expect(
            lines.dropFirst().allSatisfy {
                let c = Array($0); return c.count > 14 && c[13] == " " && c[14] != " "
            }, "\(lines)")

        var waiting = try Self.connected()
        waiting.state = .disconnected
        waiting.retryIn = 7.4
        waiting.openConnections = 1
        #expect(
            waiting.humanLines(now: Self.now)[0]
                == "disconnected from vps.example.com; retrying in 7 s · 1 connection waiting")
        var home = try Self.connected()
        home.role = .home
        #expect(home.humanLines(now: Self.now).contains("  forwarding  VPS 127.0.0.1:18080 → 127.0.0.1:4096"))
    }

    @Test(
        "durations and sizes",
        arguments: [
            (0.4, "0 s"), (59, "59 s"), (60, "1 min"), (3599, "59 min"), (3600, "1 h"), (11_525, "3 h 12 min"),
            (86_400, "1 d"), (190_800, "2 d 5 h"),
        ])
    func durations(seconds: Double, text: String) {
        #expect(StatusSnapshot.duration(seconds) == text)
    }

    @Test func sizes() {
        #expect(StatusSnapshot.bytes(0) == "0 B")
        #expect(StatusSnapshot.bytes(1023) == "1023 B")
        #expect(StatusSnapshot.bytes(1536) == "1.5 KiB")
        #expect(StatusSnapshot.bytes(5 << 30) == "5.0 GiB")
        #expect(StatusSnapshot.bytes(3 << 40) == "3072.0 GiB")
    }
}
