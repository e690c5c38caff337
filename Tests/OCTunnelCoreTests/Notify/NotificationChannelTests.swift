import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The seam (issue 57): what the notifier does above its channels reaches a channel it has never
/// heard of (`ButtonChannel`, defined in the tests only): redaction, the burst budget with its
/// merged notice, the order told, the lifetime; and a channel that answers with no answerer
/// sends nothing.
@Suite("notification channels: the notifier's rules above any channel", .ownThreads, .timeLimit(.minutes(1)))
struct NotificationChannelTests {
    @Test(
        "40 permissions naming the password, to a test-only channel: the burst of 8 in the order asked, then one \"+32 more\" notice; the password in none; nothing answered without an answerer; started once, stopped once"
    )
    func rulesAboveTheChannel() async throws {
        let channel = ButtonChannel()
        let said = NotifierTests.Said()
        let secret = "pw-\(UUID().uuidString.prefix(8))"
        let notifier = Notifier(
            channels: [StderrChannel(), channel], environment: [:], secrets: [secret], record: { said.record($0) },
            emit: { said.emit($0) })
        for request in 0..<40 {
            var moment = AgentMoment(
                kind: .permission, sessionID: "ses_1", title: "Rotate \(secret)", directory: "/home/me/shop",
                detail: "bash: echo \(secret) \(request)")
            moment.permissionID = "per_\(request)"
            notifier.notify(moment)
        }
        #expect(
            try await offPool { waitUntil(timeout: 20) { channel.told.count == Notifier.Limits.burst + 1 } },
            "\(channel.told.count)")
        let told = channel.told
        #expect(
            told.prefix(Notifier.Limits.burst).map(\.permissionID) == (0..<Notifier.Limits.burst).map { "per_\($0)" },
            "\(told)")
        #expect(told.last?.merged == AgentMoment.Merged(count: 32, otherSessions: 0), "\(told)")
        #expect(told.allSatisfy { !"\($0)".contains(secret) }, "\(told)")
        #expect(said.lines.filter { $0.hasPrefix("notify: ") }.count == Notifier.Limits.burst + 1, "\(said.lines)")
        #expect(!said.lines.contains { $0.contains("from the notification") }, "\(said.lines)")
        notifier.stop()
        #expect(channel.lifetime == ["start", "stop"], "\(channel.lifetime)")
    }
}
