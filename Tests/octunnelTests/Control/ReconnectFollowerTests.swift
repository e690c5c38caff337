import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Make before break with notifications on (issue 56): `tunnel up`'s own event follower moves its
/// stream to the new session after a planned reconnect, so the old session drains to nothing at
/// once instead of being held by that stream for `SessionSet.drainLimit` (300 s); a permission
/// asked just before and one just after each reconnect is told exactly once.
@Suite("tunnel reconnect with the event follower", .ownThreads, .timeLimit(.minutes(3)))
struct ReconnectFollowerTests {
    @Test(
        "three tunnel reconnects, notifications on: one session again within seconds, each permission told once, one stream at OpenCode"
    )
    func followerMovesToTheNewSession() async throws {
        try await NotifyCatchUpTests.withRecordingTunnel(flavor: "opencode2") { backend, _, fixture, tunnel, record in
            var asked: [String] = []
            var drained: [Double] = []
            for round in 0..<3 {
                let before = try #require(backend.askPermission(session: "ses_a", patterns: ["before \(round)"]))
                asked.append(before)
                try #require(
                    try await offPool { waitUntil(timeout: 20) { Self.told(record, before) == 1 } },
                    "\(tunnel.stderrText)")
                let started = Date()
                let result = try await offPool { try fixture.run(["tunnel", "reconnect", "--wait", "30"]) }
                #expect(result.status == 0, "\(result)")
                let after = try #require(backend.askPermission(session: "ses_a", patterns: ["after \(round)"]))
                asked.append(after)
                let one = try await offPool {
                    waitUntil(timeout: 30) { (try? fixture.status())?["sessions"] as? Int == 1 }
                }
                let status = try await offPool { try? fixture.status().description }
                #expect(one, "round \(round): the old session still drains \(status ?? "") \(tunnel.stderrText)")
                drained.append(Date().timeIntervalSince(started))
                try #require(
                    try await offPool { waitUntil(timeout: 20) { Self.told(record, after) == 1 } },
                    "\(Self.records(record))")
            }
            // A last one, told live on the one stream: a doubled catch-up would have come before it.
            let last = try #require(backend.askPermission(session: "ses_a", patterns: ["last"]))
            asked.append(last)
            try #require(
                try await offPool { waitUntil(timeout: 20) { Self.told(record, last) == 1 } }, "\(Self.records(record))"
            )
            let records = Self.records(record)
            #expect(records.count == asked.count, "a permission told twice or not at all: \(records)")
            for id in asked { #expect(Self.told(record, id) == 1, "\(id): \(records)") }
            #expect(
                NotifyTests.emit(backend, ["type": "server.ping", "fields": [String: Any]()]) == 1,
                "one event stream open at OpenCode")
            print(
                "one session again after a tunnel reconnect with notifications on: "
                    + drained.map { String(format: "%.2f s", $0) }.joined(separator: ", "))
            #expect(!tunnel.stderrText.contains("session lost"), "\(tunnel.stderrText)")
        }
    }

    static func records(_ file: String) -> [String] { NotifyCatchUpTests.records(file) }

    /// How many notifications `record` holds for permission `id`.
    static func told(_ file: String, _ id: String) -> Int {
        records(file).filter { $0.hasPrefix("permission|\(id)|") }.count
    }
}
