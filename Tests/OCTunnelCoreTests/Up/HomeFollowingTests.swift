import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A channel that exists only here (issue 57's goal: a new channel plugs in with no file outside
/// `Notify/` changed): it keeps what it is told and, on a permission, presses "Allow once" the
/// way a phone's button would, and on a question its last option, through the notifier's one
/// answer path (`ChannelContext.answer`).
final class ButtonChannel: NotificationChannel, @unchecked Sendable {
    let name = "a test's phone"
    let immediate = false
    private let lock = NSLock()
    private var moments: [AgentMoment] = []
    private var life: [String] = []

    func start(_ context: ChannelContext) { lock.lock(); life.append("start"); lock.unlock() }

    func deliver(_ moment: AgentMoment, context: ChannelContext) {
        lock.lock(); moments.append(moment); lock.unlock()
        guard context.answerable(moment) else { return }
        if let question = moment.question, let label = question.labels.last {
            context.answer(.answer(label), to: question, for: moment)
        } else if moment.kind == .permission {
            context.answer(.once, for: moment)
        }
    }

    func stop() { lock.lock(); life.append("stop"); lock.unlock() }

    var told: [AgentMoment] { lock.lock(); defer { lock.unlock() }; return moments }
    var lifetime: [String] { lock.lock(); defer { lock.unlock() }; return life }
}

/// `home up` follows OpenCode itself (issue 54): the wiring of a running `up` (`UpWiring`) pointed
/// straight at OpenCode on this machine, no tunnel and no laptop; OpenCode is started only after
/// `home up` (the quiet retries find it), and a channel of the test's own answers a permission.
@Suite("home up follows OpenCode itself, through any channel", .ownThreads, .timeLimit(.minutes(2)))
struct HomeFollowingTests {
    /// A running `up`'s wiring with `channel` as its one channel beside stderr (no desktop), OpenCode's password given.
    static func wiring(_ channel: ButtonChannel, password: String) -> UpWiring {
        var notify = NotifyOptions()
        notify.desktop = false
        return UpWiring(
            notify: notify, credentials: OpenCodeCredentials(password: password), pairPort: nil, channels: [channel])
    }

    @Test(
        "started before OpenCode: once it answers, a finish, a permission and a failure reach the channel and stderr once each; the channel's Allow once reaches OpenCode by the path `permission allow` takes; the line says how to answer; stop stops the channel",
        arguments: ["opencode1", "opencode2"])
    func followsAndAnswers(flavor: String) async throws {
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let port = freePort()
        let home = HostPort(host: "127.0.0.1", port: port)
        let channel = ButtonChannel()
        let started = try FollowingHome.start(home: home, wiring: Self.wiring(channel, password: password))
        let (following, lines) = (started.following, started.lines)
        defer { following.stop() }
        #expect(channel.lifetime.isEmpty, "no channel before OpenCode answers")

        let backend = try OpenCodeStandIn(flavor: flavor, password: password, port: port)
        defer { backend.stop() }
        try #require(try await offPool { started.follows(backend) }, "\(lines.text)")
        #expect(lines.text.contains { $0.hasPrefix("home: OpenCode answers at \(home) now") }, "\(lines.text)")

        for event in StandInEvent.finish("s1", title: "Fix the login bug", directory: "/home/me/shop") + [
            StandInEvent.failure("s2", "rate limited")
        ] {
            #expect(backend.post("/standin/emit", event).status == 200)
        }
        let id = try #require(backend.askPermission(session: "s3", patterns: ["git push"]))
        let answered = try await offPool { waitUntil(timeout: 20) { !backend.replies.isEmpty } }
        #expect(answered, "\(lines.text)")
        #expect(
            try await offPool {
                waitUntil(timeout: 20) { Set(channel.told.map(\.kind)) == [.finished, .permission, .failed] }
            },
            "\(channel.told) \(lines.text)")
        let path = OpenCodeStandIn.replyPath(flavor: flavor, "permission", id, session: "s3")
        #expect(backend.repliesSent == [path + #" {"reply":"once"}"#])
        let said = lines.text
        #expect(said.contains { $0.hasSuffix("answer: octunnel permission allow|always|reject \(id)") }, "\(said)")
        #expect(said.contains { $0.hasPrefix("permission \(id) allowed once from the notification") }, "\(said)")
        #expect(said.filter { $0.hasPrefix("notify: ") }.count == 3, "\(said)")
        #expect(channel.told.count == 3, "\(channel.told)") // the question below makes 4
        #expect(!said.joined().contains(password))

        // A question: its last option pressed on the channel reaches OpenCode once, as that label.
        let question = try #require(
            backend.askQuestion(session: "s3", "Which database?", labels: ["Postgres", "SQLite"])?.id)
        #expect(try await offPool { waitUntil(timeout: 20) { backend.replies.count == 2 } }, "\(lines.text)")
        #expect(
            backend.replies.last?["path"] as? String
                == OpenCodeStandIn.replyPath(flavor: flavor, "question", question, session: "s3"),
            "\(backend.replies)")
        #expect(backend.replies.last?["body"] as? String == #"{"answers":[["SQLite"]]}"#, "\(backend.replies)")
        #expect(
            try await offPool {
                waitUntil(timeout: 20) {
                    lines.text.contains { $0.hasPrefix("question \(question) answered \"SQLite\"") }
                }
            },
            "\(lines.text)")
        #expect(
            lines.text.contains {
                $0.hasSuffix(
                    "answer: octunnel permission answer \(question) LABEL | octunnel permission dismiss \(question)")
            },
            "\(lines.text)")
        following.stop()
        #expect(channel.lifetime == ["start", "stop"], "\(channel.lifetime)")
    }
}
