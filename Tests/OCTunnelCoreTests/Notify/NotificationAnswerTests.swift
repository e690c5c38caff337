import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Answering a permission from its desktop notification (issue 48): which notifications get
/// actions, what `notify-send` is given, and which reply each printed action becomes.
@Suite("answer from the notification: actions, arguments, the reply chosen", .ownThreads)
struct NotificationAnswerTests {
    static func asked(_ id: String? = "per_1") -> AgentMoment {
        var moment = AgentMoment(
            kind: .permission, sessionID: "ses_1", title: "Fix <b>login</b>", directory: "/home/me/shop",
            detail: "bash: git push")
        moment.permissionID = id
        return moment
    }

    @Test(
        "each action name notify-send prints is OpenCode's reply of that name; a closed, expired or stopped notification (nothing, or anything else) sends none"
    )
    func chosenReply() {
        #expect(NotificationAnswer.chosen("once\n") == .once)
        #expect(NotificationAnswer.chosen("always\n") == .always)
        #expect(NotificationAnswer.chosen("reject") == .reject)
        #expect(NotificationAnswer.chosen("") == nil)
        #expect(NotificationAnswer.chosen("\n") == nil)
        #expect(NotificationAnswer.chosen("allow\n") == nil)
        #expect(NotificationAnswer.chosen("0\n") == nil)
        #expect(NotificationAnswer.actions.map(\.reply) == PermissionReply.allCases)
    }

    @Test(
        "only a permission told alone that named its request gets actions; finished, failed, a question (no permission id) and a merged +N more do not"
    )
    func answerable() {
        #expect(NotificationAnswer.answerable(Self.asked()))
        #expect(!NotificationAnswer.answerable(Self.asked(nil)))
        #expect(!NotificationAnswer.answerable(Self.asked("")))
        var merged = Self.asked()
        merged.merged = AgentMoment.Merged(count: 3, otherSessions: 0)
        #expect(!NotificationAnswer.answerable(merged))
        for kind in [AgentMoment.Kind.finished, .failed] {
            var other = AgentMoment(kind: kind, sessionID: "ses_1", title: nil, directory: nil, detail: nil)
            other.permissionID = "per_1"
            #expect(!NotificationAnswer.answerable(other))
        }
    }

    #if os(Linux)
        @Test(
            "notify-send's arguments: with actions, the three --action=NAME=Label and an expiry of the wait before the summary and body; without, as before"
        )
        func arguments() throws {
            try requireTool(
                "/usr/bin/notify-send",
                "the desktop command is built only where notify-send is (apt install libnotify-bin)")
            let environment = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]
            let plain = try #require(DesktopChannel.command(Self.asked(), environment: environment))
            #expect(
                plain.arguments == [
                    "--app-name=octunnel", "--urgency=critical", "--",
                    "OpenCode asks for permission: Fix <b>login</b> (shop)",
                    "bash: git push",
                ])
            let answering = try #require(DesktopChannel.command(Self.asked(), environment: environment, actions: true))
            #expect(
                answering.arguments == [
                    "--app-name=octunnel", "--urgency=critical", "--action=once=Allow once",
                    "--action=always=Allow always",
                    "--action=reject=Reject", "--expire-time=120000", "--",
                    "OpenCode asks for permission: Fix <b>login</b> (shop)", "bash: git push",
                ])
            #expect(DesktopChannel.command(Self.asked(), environment: [:], actions: true) == nil)
        }
    #endif

    @Test(
        "the outcome's words: the line on stderr names the id, the reply and the session; the follow-up's headline says it was not answered"
    )
    func words() {
        #expect(
            NotificationAnswer.sentLine(.always, Self.asked())
                == "permission per_1 allowed always from the notification: Fix <b>login</b> (shop)")
        #expect(
            NotificationAnswer.failedHeadline(Self.asked())
                == "OpenCode's permission was not answered: Fix <b>login</b> (shop)")
    }
}
