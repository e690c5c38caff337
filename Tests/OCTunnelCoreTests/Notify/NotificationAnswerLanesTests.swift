import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Notifications waiting for a choice hold a lane each: on a real desktop (a session bus, Xvfb,
/// dunst), a burst of permissions leaves at most `Limits.answering` waiting and the rest shown
/// without actions, so the lanes stay free for what comes next; `stop()` ends the waiting ones.
@Suite("answer from the notification: waiting notifications are bounded", .ownThreads, .timeLimit(.minutes(2)))
struct NotificationAnswerLanesTests {
    /// A notifier that shows on `desktop` only (no command), its lines kept in `said` and each reply it sends in
    /// `sent` as "ID DIRECTORY REPLY".
    static func notifier(on desktop: DesktopSession, _ said: NotifierTests.Said, _ sent: Locked<[String]>) -> Notifier {
        var options = NotifyOptions()
        options.command = nil
        return Notifier(
            options: options, environment: desktop.environment, record: { said.record($0) },
            answer: { id, directory, reply in sent.update { $0.append("\(id) \(directory ?? "-") \(reply.rawValue)") }
            },
            emit: { said.emit($0) })
    }

    @Test(
        "6 permissions at once: all 6 shown, only 2 wait with actions (2 programs left running), the choice on one is sent with its id; stop() ends the rest"
    )
    func boundedWaiting() async throws {
        let desktop = try DesktopSession()
        defer { desktop.stop() }
        let said = NotifierTests.Said()
        let sent = Locked<[String]>([])
        let notifier = Self.notifier(on: desktop, said, sent)
        for request in 0..<6 { notifier.notify(NotifierTests.asked(request)) }
        #expect(
            try await offPool {
                waitUntil(timeout: 20) { desktop.shown.count == 6 && notifier.running == Notifier.Limits.answering }
            },
            "\(desktop.shown) running \(notifier.running)")
        // Two of them (whichever the lanes took first) carry the actions; the menu picks one.
        try desktop.choose(action: "reject")
        #expect(try await offPool { waitUntil(timeout: 20) { sent.value.count == 1 } }, "\(said.lines)")
        #expect(
            sent.value.count == 1 && (0..<6).map { "per_\($0) /home/me/shop reject" }.contains(sent.value.first ?? ""),
            "\(sent.value)")
        #expect(
            try await offPool {
                waitUntil(timeout: 20) {
                    said.lines.contains { $0.hasSuffix("rejected from the notification: Fix the login bug (shop)") }
                }
            },
            "\(said.lines)")
        notifier.stop()
        #expect(notifier.running == 0)
        #expect(sent.value.count == 1, "\(sent.value)")
    }
}
