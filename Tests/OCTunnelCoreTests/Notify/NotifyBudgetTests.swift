import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The notifier's budget (issue 48): a few moments of a kind told at once, then one every few
/// seconds; the rest held and told as one "+N more" notice.
@Suite("the notifier's budget: a burst told, the rest merged into one notice", .ownThreads)
struct NotifyBudgetTests {
    static func asked(_ session: String, _ request: Int, title: String? = nil) -> AgentMoment {
        var moment = AgentMoment(
            kind: .permission, sessionID: session, title: title, directory: nil, detail: "bash: make \(request)")
        moment.permissionID = "per_\(request)"
        return moment
    }

    @Test(
        "3,000 distinct requests: the burst is told one by one, the rest as one notice once a token is back, naming the first session and how many others"
    )
    func flood() {
        var budget = NotifyBudget(burst: 4, refill: 2)
        var told: [AgentMoment] = []
        for request in 0..<3000 {
            let session = request % 3 == 0 ? "s-login" : "s-\(request % 7)"
            if let moment = budget.admit(
                Self.asked(session, request, title: session == "s-login" ? "Fix the login bug" : nil), now: 0,
                room: true)
            {
                told.append(moment)
            }
        }
        #expect(told.map(\.permissionID) == ["per_0", "per_1", "per_2", "per_3"])
        #expect(budget.heldCount == 2996)
        #expect(budget.release(now: 1, room: 8).isEmpty, "no token before 2 s")
        #expect(budget.nextRelease(now: 1) == 2)
        let notices = budget.release(now: 2, room: 8)
        #expect(notices.count == 1)
        let notice = try! #require(notices.first)
        #expect(notice.merged == AgentMoment.Merged(count: 2996, otherSessions: 7))
        #expect(notice.message == "+2996 more permissions asked in s-4 and 7 other sessions", "\(notice.message)")
        #expect(notice.headline == "OpenCode asks for permission: s-4 and 7 other sessions")
        #expect(notice.environment["OCTUNNEL_MERGED"] == "2996" && notice.environment["OCTUNNEL_PERMISSION_ID"] == nil)
        #expect(budget.heldCount == 0 && budget.nextRelease(now: 2) == nil)
    }

    @Test(
        "one session: \"+N more permissions asked in Fix the login bug\"; a single held moment is told as itself; kinds have their own buckets; no room holds it"
    )
    func oneSession() {
        var budget = NotifyBudget(burst: 1, refill: 5)
        #expect(budget.admit(Self.asked("s", 1, title: "Fix the login bug"), now: 0, room: true) != nil)
        for request in 2...13 {
            #expect(budget.admit(Self.asked("s", request, title: "Fix the login bug"), now: 0.1, room: true) == nil)
        }
        let finished = AgentMoment(kind: .finished, sessionID: "t", title: "Other", directory: nil, detail: nil)
        #expect(budget.admit(finished, now: 0.2, room: false) == nil, "no room: held")
        let notices = budget.release(now: 5.2, room: 8)
        #expect(
            notices.map(\.message) == [
                "the agent is done and waits for you", "+12 more permissions asked in Fix the login bug",
            ])
        #expect(notices.first?.merged == nil)
        #expect(budget.admit(Self.asked("s", 20), now: 5.3, room: true) == nil, "its bucket is empty again")
    }

    @Test("release gives at most the room it is given")
    func room() {
        var budget = NotifyBudget(burst: 1, refill: 1)
        for kind in AgentMoment.Kind.allCases {
            _ = budget.admit(
                AgentMoment(kind: kind, sessionID: "a", title: nil, directory: nil, detail: nil), now: 0, room: true)
            _ = budget.admit(
                AgentMoment(kind: kind, sessionID: "b", title: nil, directory: nil, detail: nil), now: 0, room: true)
        }
        #expect(budget.release(now: 10, room: 2).count == 2)
        #expect(budget.release(now: 10, room: 2).count == 1)
    }

    @Test("a bounded set forgets its oldest member past its capacity, and nothing else")
    func boundedSet() {
        var set = BoundedSet<Int>(capacity: 3)
        let inserted = (0..<10).map { set.insert($0) }
        #expect(inserted.allSatisfy { $0 })
        #expect(set.count == 3)
        #expect(!set.contains(6) && set.contains(7) && set.contains(9))
        let again = set.insert(9)
        #expect(!again)
        let forgotten = set.insert(6)
        #expect(forgotten, "forgotten, so new again")
    }
}
