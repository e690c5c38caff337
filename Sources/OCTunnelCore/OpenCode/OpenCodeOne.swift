import Foundation

/// OpenCode 1.x (`packages/opencode`, Hono): `/global/health` `{healthy, version}`, the global and
/// per-directory event streams, bare-array pending lists (`GET /permission`, `GET /question`),
/// replies on `/permission/:id/reply` (before it `/session/:id/permissions/:id`) and
/// `/question/:id/reply|reject`, and `GET /session/status` for what still works.
public struct OpenCodeOne: OpenCodeDialect {
    public init() {}

    public var number: Int { 1 }

    public var healthRoutes: [String] { ["/global/health"] }

    public func version(healthy path: String, body: [UInt8]) -> String? {
        guard let health = decodeWire(HealthWire.self, body), health.healthy == true, let version = health.version,
            !version.isEmpty
        else { return nil }
        return version
    }

    public func serverPort(health path: String, body: [UInt8]) -> Int? { nil }

    /// 1.x's basic auth answers "Unauthorized" (Hono) or nothing (its Effect server): never named.
    public func namesItself(refusal body: [UInt8]) -> Bool { false }

    public var ownsUnnamedRefusals: Bool { true }

    public var refusalProvesServer: Bool { false }

    /// The global stream (`{"directory","payload":{"type",…}}`), then the per-directory one (`{"type",…}`).
    public var eventPaths: [String] { ["/global/event", "/event"] }

    public func event(data: String) -> OpenCodeEvent? { OpenCodeEvent(data: data) }

    public var permissionListPath: String { "/permission" }

    public var questionListPath: String { "/question" }

    /// `[{id, sessionID, permission, patterns, metadata, always, tool?}]` (packages/opencode/src/permission/index.ts).
    public func pendingPermissions(_ body: [UInt8]) -> [PermissionRequestWire?]? {
        decodeWire([Lenient<Request>].self, body)?.map { $0.value.map(\.wire) }
    }

    public func pendingQuestions(_ body: [UInt8]) -> [QuestionRequestWire?]? {
        decodeWire([Lenient<QuestionRequestWire>].self, body)?.map(\.value)
    }

    public func sessionPath(_ session: String) -> String { "/session/\(session)" }

    public func sessionTitle(_ body: [UInt8]) -> String? { decodeWire(SessionInfoWire.self, body)?.title }

    public var permissionReplyRoutes: [PermissionReplyRoute] { [.one, .oneSession] }

    public func questionReplyPath(_ request: AskedQuestion, _ reply: QuestionReply) -> String {
        "/question/\(request.id)/\(reply.verb)"
    }

    /// 1.x's router has no such route (its errors are tagged when the request is gone).
    public func replyNotFound(body: [UInt8]) -> PermissionReplyOutcome { .routeMissing }

    /// The sessions seen working that `GET /session/status` of their directory no longer lists; a
    /// directory that does not answer in time is left out, and none of its sessions is judged.
    public func endedTurns(_ watch: inout AgentSessionWatch, directories: [String], read: OpenCodeRead) -> [AgentMoment]
    {
        var working: [String?: Set<String>] = [:]
        for directory in [nil] + directories.map(Optional.some) where read.timeLeft() {
            guard let body = read.get("/session/status", directory), let listed = watch.working(in: body) else {
                continue
            }
            working[directory] = listed
        }
        return watch.caughtUp(working: working)
    }

    public var hasPairLinks: Bool { false }

    public var passwordNeededText: String {
        "OpenCode 1 was started with OPENCODE_SERVER_PASSWORD, so it asks for a password: set OPENCODE_PASSWORD "
            + "(or OPENCODE_SERVER_PASSWORD) here to the same value (and OPENCODE_SERVER_USERNAME if it is not `opencode`), "
            + "or give --password-file PATH."
    }

    public var passwordRefusedHint: String {
        "use the OPENCODE_SERVER_PASSWORD the home machine's `opencode serve` was started with"
    }

    /// One entry of 1.x's permission list.
    typealias Request = PermissionEntryWire<RequestKeys>
    /// 1.x's names for a pending permission's fields.
    enum RequestKeys: String, PermissionEntryKeys { case id, sessionID, kind = "permission", patterns }
}
