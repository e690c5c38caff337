import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 48: the list and reply answers of OpenCode 1.x and 2.x, parsed bounded, and the reply
/// routes and bodies each version takes (anomalyco/opencode: packages/opencode/src/server/
/// instance/permission.ts, packages/protocol/src/groups/permission.ts).
@Suite("pending permissions: the list and reply answers of each OpenCode", .ownThreads)
struct PendingPermissionTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("1.x's bare array and 2.x's {location, data} both parse; each names what is asked")
    func bothShapes() throws {
        let one = try #require(
            PendingPermissionList.parse(
                Self.bytes(
                    """
                    [{"id":"per_2184b9644001UGosVGoUY359UD","sessionID":"ses_1","permission":"bash","patterns":["git push"],"metadata":{},"always":[]}]
                    """), generation: .one, directory: nil))
        #expect(one.items.map(\.asked) == ["bash: git push"])
        #expect(one.items.first?.sessionID == "ses_1")
        let two = try #require(
            PendingPermissionList.parse(
                Self.bytes(
                    """
                    {"location":{"directory":"/p","project":{"id":"x"}},"data":[{"id":"per_1","sessionID":"ses_2","action":"edit","resources":["a.swift","b.swift"]}]}
                    """), generation: .two, directory: "/p"))
        #expect(two.items.map(\.asked) == ["edit: a.swift, b.swift"])
        #expect(two.items.first?.directory == "/p")
        // Each generation's shape is not the other's.
        #expect(PendingPermissionList.parse(Self.bytes("[]"), generation: .two, directory: nil) == nil)
        #expect(PendingPermissionList.parse(Self.bytes("{\"data\":[]}"), generation: .one, directory: nil) == nil)
        #expect(PendingPermissionList.parse(Self.bytes("<!doctype html>"), generation: .one, directory: nil) == nil)
    }

    @Test(
        "a hostile list: ids unsafe in a route or holding the password are skipped, the list is capped with +N more, texts are cut and shown safe"
    )
    func hostileList() throws {
        var entries = [
            #"{"id":"../../x","sessionID":"s","permission":"bash","patterns":[]}"#,
            #"{"id":"per_pw-secret","sessionID":"s","permission":"bash","patterns":[]}"#,
            #"{"id":"per_ok","sessionID":"s","permission":"bash\u001b[2J","patterns":["curl -u opencode:pw-secret \u0007"]}"#,
            #"7"#,
        ]
        entries += (0..<150).map {
            #"{"id":"per_\#($0)","sessionID":"s","permission":"x","patterns":[\#(String(repeating: "\"p\",", count: 20))"\#(String(repeating: "y", count: 5000))"]}"#
        }
        let list = try #require(
            PendingPermissionList.parse(
                Self.bytes("[" + entries.joined(separator: ",") + "]"), generation: .one, directory: nil,
                secrets: ["pw-secret"]))
        #expect(list.skipped == 3)
        #expect(list.items.count == PendingPermissionList.limit)
        #expect(list.more == 151 - PendingPermissionList.limit)
        let first = try #require(list.items.first)
        #expect(first.id == "per_ok")
        #expect(first.asked == "bash\\x1b[2J: curl -u opencode:*** \\x07")
        #expect(list.items.allSatisfy { $0.patterns.count <= PendingPermissionList.patternLimit + 1 })
        #expect(list.items.allSatisfy { $0.patterns.allSatisfy { $0.count <= PendingPermissionList.textLimit + 1 } })
        #expect(list.humanLines().last == "+\(list.more) more")
    }

    @Test("how long ago, from OpenCode's ascending id: its 36 bits of milliseconds, the newest time at or before now")
    func askedAtFromTheId() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        func id(_ date: Date) -> String {
            let value = (UInt64(date.timeIntervalSince1970 * 1000) * 0x1000 + 1) & ((1 << 48) - 1)
            let hex = String(value, radix: 16)
            return "per_" + String(repeating: "0", count: 12 - hex.count) + hex + "AbCdEfGhIjKlMn"
        }
        let asked = now.addingTimeInterval(-185)
        #expect(
            abs(
                (PendingPermission.askedAt(id: id(asked), now: now)?.timeIntervalSince1970 ?? 0)
                    - asked.timeIntervalSince1970) < 0.01)
        #expect(
            PendingPermission.askedAt(id: id(now.addingTimeInterval(20)), now: now) == now,
            "a clock a little ahead is 'just now'")
        #expect(PendingPermission.askedAt(id: "per_zz", now: now) == nil)
        #expect(PendingPermission.askedAt(id: "nounderscore", now: now) == nil)
        #expect(PendingPermission.ago(185) == "3 min ago")
    }

    @Test("the reply's route and body per version, as upstream declares them")
    func routesAndBodies() {
        let request = PendingPermission(
            id: "per_1", sessionID: "ses_9", kind: "bash", patterns: [], directory: nil, askedAt: nil)
        #expect(PermissionReplyRoute.routes(for: .one) == [.one, .oneSession])
        #expect(PermissionReplyRoute.routes(for: .two) == [.two])
        #expect(PermissionReplyRoute.one.path(for: request) == "/permission/per_1/reply")
        #expect(PermissionReplyRoute.oneSession.path(for: request) == "/session/ses_9/permissions/per_1")
        #expect(PermissionReplyRoute.two.path(for: request) == "/api/session/ses_9/permission/per_1/reply")
        #expect(String(decoding: PermissionReplyRoute.one.body(.once), as: UTF8.self) == #"{"reply":"once"}"#)
        #expect(
            String(decoding: PermissionReplyRoute.oneSession.body(.always), as: UTF8.self) == #"{"response":"always"}"#)
        #expect(String(decoding: PermissionReplyRoute.two.body(.reject), as: UTF8.self) == #"{"reply":"reject"}"#)
        #expect(PermissionReply(command: "allow") == .once && PermissionReply(command: "maybe") == nil)
    }

    @Test(
        "each reply answer judged: taken, gone (2.x's PermissionNotFoundError), a missing route, refused, anything else quoted"
    )
    func replyAnswers() {
        let gone = Self.bytes(
            #"{"_tag":"PermissionNotFoundError","requestID":"per_1","message":"Permission request not found: per_1"}"#)
        #expect(PermissionReplyRoute.two.judge(status: 204, contentType: nil, body: []) == .answered)
        #expect(PermissionReplyRoute.two.judge(status: 404, contentType: "application/json", body: gone) == .gone)
        #expect(PermissionReplyRoute.one.judge(status: 404, contentType: "application/json", body: gone) == .gone)
        #expect(
            PermissionReplyRoute.one.judge(status: 200, contentType: "application/json", body: Self.bytes("true"))
                == .answered)
        #expect(PermissionReplyRoute.one.judge(status: 404, contentType: nil, body: []) == .routeMissing)
        #expect(
            PermissionReplyRoute.one.judge(
                status: 200, contentType: "text/html", body: Self.bytes("<!doctype html><html>")) == .routeMissing)
        #expect(PermissionReplyRoute.two.judge(status: 404, contentType: nil, body: []) == .routeMissing)
        #expect(PermissionReplyRoute.two.judge(status: 401, contentType: nil, body: []) == .refused(generation: .two))
        #expect(
            PermissionReplyRoute.one.judge(status: 200, contentType: "application/json", body: Self.bytes("false"))
                == .failed(status: 200, body: Self.bytes("false")))
        #expect(
            PermissionReplyRoute.two.judge(status: 500, contentType: nil, body: []) == .failed(status: 500, body: []))
    }

    @Test("questions of 1.x and 2.x: the first question with its header and choices, +N more, bounded and shown safe")
    func questions() throws {
        let one = try #require(
            PendingQuestion.parse(
                Self.bytes(
                    """
                    [{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Which database?","header":"DB","options":[{"label":"Postgres","description":""},{"label":"SQLite\\u001b[2J","description":""}]},{"question":"Next?","header":"","options":[]}]},{"id":"../x","sessionID":"s","questions":[]}]
                    """), generation: .one, directory: nil))
        #expect(one.items.count == 1)
        #expect(one.items.first?.text == "DB: Which database? (+1 more)")
        #expect(one.items.first?.options == ["Postgres", "SQLite\\x1b[2J"])
        let two = try #require(
            PendingQuestion.parse(
                Self.bytes(
                    #"{"data":[{"id":"que_2","sessionID":"ses_2","questions":[{"question":"ok?","header":"","options":[]}]}]}"#
                ),
                generation: .two, directory: "/p"))
        #expect(two.items.map(\.text) == ["ok?"])
        #expect(PendingQuestion.parse(Self.bytes("[]"), generation: .two, directory: nil) == nil)
        var list = PendingPermissionList()
        list.questions = one.items
        #expect(
            list.humanLines().first?.contains(
                "question: DB: Which database? (+1 more) [Postgres, SQLite\\x1b[2J]  (session ses_1)") == true,
            "\(list.humanLines())")
    }

    @Test("the gone message is plain and has its own exit code")
    func goneMessage() {
        let error = PermissionError.permissionNotPending(id: "per_1")
        #expect(error.exitStatus == .notPending)
        #expect(error.errorDescription?.contains("already answered elsewhere, or OpenCode restarted") == true)
    }
}
