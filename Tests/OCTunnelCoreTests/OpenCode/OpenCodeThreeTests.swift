import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A third OpenCode generation, written as the issue asks a newcomer to write one: one conformer
/// of `OpenCodeDialect`, in the tests only. It compiles only because it answers every requirement
/// (the protocol has no default answers), and the health test, the pending list, a reply and the
/// event stream speak it with no file outside `Sources/OCTunnelCore/OpenCode/` changed. It speaks
/// the stand-in's 2.x routes under another number, so that a real server answers it.
struct OpenCodeThree: OpenCodeDialect {
    private let base = OpenCodeTwo()
    static let generation = OpenCodeGeneration(OpenCodeThree())

    var number: Int { 3 }
    var healthRoutes: [String] { ["/api/info"] }
    func version(healthy path: String, body: [UInt8]) -> String? {
        base.version(healthy: path, body: body).map { "3~\($0)" }
    }
    func serverPort(health path: String, body: [UInt8]) -> Int? { base.serverPort(health: path, body: body) }
    func namesItself(refusal body: [UInt8]) -> Bool { base.namesItself(refusal: body) }
    var ownsUnnamedRefusals: Bool { false }
    var refusalProvesServer: Bool { true }
    var eventPaths: [String] { ["/api/event"] }
    /// Its stream renames one event, to show a dialect translating into octunnel's words.
    func event(data: String) -> OpenCodeEvent? {
        guard let event = OpenCodeEvent(data: data) else { return nil }
        return event.type == "permission.v3.asked"
            ? OpenCodeEvent(data: data.replacingOccurrences(of: "permission.v3.asked", with: "permission.asked"))
            : event
    }
    var permissionListPath: String { "/api/permission/request" }
    var questionListPath: String { "/api/question/request" }
    func pendingPermissions(_ body: [UInt8]) -> [PermissionRequestWire?]? { base.pendingPermissions(body) }
    func pendingQuestions(_ body: [UInt8]) -> [QuestionRequestWire?]? { base.pendingQuestions(body) }
    func sessionPath(_ session: String) -> String { "/api/session/\(session)" }
    func sessionTitle(_ body: [UInt8]) -> String? { base.sessionTitle(body) }
    var permissionReplyRoutes: [PermissionReplyRoute] {
        [
            PermissionReplyRoute(name: "3.x", generation: Self.generation) {
                "/api/session/\($0.sessionID)/permission/\($0.id)/reply"
            }
        ]
    }
    func questionReplyPath(_ request: AskedQuestion, _ reply: QuestionReply) -> String {
        base.questionReplyPath(request, reply)
    }
    func replyNotFound(body: [UInt8]) -> PermissionReplyOutcome { base.replyNotFound(body: body) }
    func endedTurns(_ watch: inout AgentSessionWatch, directories: [String], read: OpenCodeRead) -> [AgentMoment] {
        base.endedTurns(&watch, directories: directories, read: read)
    }
    var hasPairLinks: Bool { false }
    var passwordNeededText: String { "OpenCode 3 asks for a password." }
    var passwordRefusedHint: String { "use OpenCode 3's password" }
}

@Suite(
    "a third OpenCode generation: one conformer in the tests, spoken everywhere", .timeLimit(.minutes(2)), .ownThreads)
struct OpenCodeThreeTests {
    static let three = OpenCodeThree.generation

    @Test(
        "it is its own generation: label, number, routes beside the known ones, its words in the errors, no pair links")
    func itsOwnGeneration() {
        #expect(Self.three != .two && Self.three.label == "API 3" && Self.three.rawValue == 3)
        let routes = OpenCodeAnswer.healthRoutes(of: OpenCodeGeneration.known + [Self.three])
        #expect(routes.last?.path == "/api/info" && routes.last?.generation == Self.three)
        #expect(
            HealthError.healthNeedsPassword(generation: Self.three).localizedDescription
                == "OpenCode 3 asks for a password.")
        let report = HealthReport(
            version: "3", generation: Self.three, healthPath: "/api/info", eventsPath: "/api/event",
            healthMilliseconds: 1, eventsMilliseconds: 1, serverPort: 49374)
        #expect(PairPort.plan(for: report, localPort: 4096, choice: .automatic) == nil)
        let renamed = #"{"type":"permission.v3.asked","data":{"id":"per_1","sessionID":"ses_1","action":"bash"}}"#
        #expect(Self.three.api.event(data: renamed)?.type == "permission.asked")
    }

    @Test(
        "against a real server: the health test names API 3, the pending list is read and a reply sent through its own route"
    )
    func spokenAgainstARealServer() throws {
        let password = "three-\(UInt32.random(in: 0...UInt32.max))"
        let backend = try OpenCodeStandIn(flavor: "opencode2", password: password)
        defer { backend.stop() }
        let credentials = OpenCodeCredentials(password: password)
        var check = HealthCheck(
            localPort: backend.port, remote: HostPort(host: "127.0.0.1", port: backend.port), reverseCommand: "",
            timeout: 20, credentials: credentials)
        check.localHost = "127.0.0.1"
        check.generations = [Self.three]
        let report = try check.run()
        #expect(report.generation == Self.three && report.version.hasPrefix("3~") && report.eventsPath == "/api/event")

        let id = try #require(backend.askPermission(session: "ses_three", patterns: ["git push"]))
        var client = PermissionClient(host: "127.0.0.1", port: backend.port, credentials: credentials, timeout: 20)
        client.generations = [Self.three]
        let (generation, list) = try client.list()
        #expect(generation == Self.three)
        #expect(list.items.map(\.asked) == ["bash: git push"])
        let answered = try client.answer(id: id, reply: .once)
        #expect(answered.id == id)
        let paths = backend.replies.compactMap { $0["path"] as? String }
        #expect(paths == ["/api/session/ses_three/permission/\(id)/reply"])
    }
}
