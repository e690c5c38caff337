import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Notifications waiting for a choice hold a lane each: on a real desktop (a session bus, Xvfb,
/// dunst), a burst of permissions leaves at most `Limits.answering` waiting and the rest shown
/// without actions, so the lanes stay free for what comes next; `stop()` ends the waiting ones.
@Suite("answer from the notification: waiting notifications are bounded", .ownThreads, .timeLimit(.minutes(2)))
struct NotificationAnswerLanesTests {
    @Test(
        "6 permissions at once: all 6 shown, only 2 wait with actions (2 programs left running), the choice on one is sent with its id; stop() ends the rest"
    )
    func boundedWaiting() async throws {
        let desktop = try DesktopSession()
        defer { desktop.stop() }
        let said = NotifierTests.Said()
        let sent = Sent()
        var options = NotifyOptions()
        options.command = nil
        let notifier = Notifier(
            options: options, environment: desktop.environment, record: { said.record($0) },
            answer: { id, directory, reply in sent.add("\(id) \(directory ?? "-") \(reply.rawValue)") },
            emit: { said.emit($0) })
        for request in 0..<6 { notifier.notify(NotifierTests.asked(request)) }
        #expect(
            try await offPool {
                waitUntil(timeout: 20) { desktop.shown.count == 6 && notifier.running == Notifier.Limits.answering }
            },
            "\(desktop.shown) running \(notifier.running)")
        // Two of them (whichever the lanes took first) carry the actions; the menu picks one.
        try desktop.choose(action: "reject")
        #expect(try await offPool { waitUntil(timeout: 20) { sent.all.count == 1 } }, "\(said.lines)")
        #expect(
            sent.all.count == 1 && (0..<6).map { "per_\($0) /home/me/shop reject" }.contains(sent.all.first ?? ""),
            "\(sent.all)")
        #expect(
            try await offPool {
                waitUntil(timeout: 20) {
                    said.lines.contains { $0.hasSuffix("rejected from the notification: Fix the login bug (shop)") }
                }
            },
            "\(said.lines)")
        notifier.stop()
        #expect(notifier.running == 0)
        #expect(sent.all.count == 1, "\(sent.all)")
    }

    final class Sent: @unchecked Sendable {
        private let lock = NSLock()
        private var replies: [String] = []
        func add(_ reply: String) { lock.lock(); replies.append(reply); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return replies }
    }
}
