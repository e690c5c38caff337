import Foundation

/// OpenCode 2.x (`packages/protocol` + `packages/server`, Effect HttpApi): `/api/info`
/// `{version, pid, urls}` (`/api/status` documented for 2.0.x, `/api/health` in 2.0.3 and the
/// betas), `/api/event`, reads wrapped in `{"data": …}`, tagged errors (`{"_tag": …}`), replies
/// under `/api/session/:sessionID/…`, and `GET /api/session/active` with each session's durable
/// log for what ended meanwhile.
public struct OpenCodeTwo: OpenCodeDialect {
    public init() {}

    public var number: Int { 2 }

    public var healthRoutes: [String] { ["/api/info", "/api/status", "/api/health"] }

    /// `/api/health` says `healthy`; `/api/info` and `/api/status` carry the server's `pid`.
    public func version(healthy path: String, body: [UInt8]) -> String? {
        guard let health = decodeWire(HealthWire.self, body), let version = health.version, !version.isEmpty else {
            return nil
        }
        let healthy = path == "/api/health" ? health.healthy == true : health.pid != nil
        return healthy ? version : nil
    }

    /// The port of the server's own loopback address in `/api/info`'s `urls` (as
    /// packages/server/src/server-info.ts builds them: the bound address, or every interface's
    /// for a wildcard bind), else of its first URL; nil when the body names none.
    public func serverPort(health path: String, body: [UInt8]) -> Int? {
        guard path == "/api/info", let urls = decodeWire(HealthWire.self, body)?.urls else { return nil }
        let parsed = urls.prefix(32).compactMap { $0.text.flatMap(URLComponents.init(string:)) }
            .filter { ($0.port ?? 0) > 0 && ($0.port ?? 0) <= 65535 }
        let loopback = parsed.first { ["127.0.0.1", "localhost", "[::1]", "::1"].contains($0.host ?? "") }
        return (loopback ?? parsed.first)?.port
    }

    /// `{"_tag":"UnauthorizedError",…}` (packages/server/src/middleware/authorization.ts), on any route.
    public func namesItself(refusal body: [UInt8]) -> Bool { TaggedErrorWire.tag(of: body) == "UnauthorizedError" }

    public var ownsUnnamedRefusals: Bool { false }

    public var refusalProvesServer: Bool { true }

    public var eventPaths: [String] { ["/api/event"] }

    public func event(data: String) -> OpenCodeEvent? { OpenCodeEvent(data: data) }

    public var permissionListPath: String { "/api/permission/request" }

    public var questionListPath: String { "/api/question/request" }

    /// `{location, data: [{id, sessionID, action, resources, save?, metadata?, reason?, source?}]}`
    /// (packages/protocol/src/groups/permission.ts, packages/schema/src/permission.ts).
    public func pendingPermissions(_ body: [UInt8]) -> [PermissionRequestWire?]? {
        decodeWire(DataEnvelope<[Lenient<Request>]>.self, body)?.data.map { $0.value.map(\.wire) }
    }

    public func pendingQuestions(_ body: [UInt8]) -> [QuestionRequestWire?]? {
        decodeWire(DataEnvelope<[Lenient<QuestionRequestWire>]>.self, body)?.data.map(\.value)
    }

    public func sessionPath(_ session: String) -> String { "/api/session/\(session)" }

    public func sessionTitle(_ body: [UInt8]) -> String? {
        decodeWire(DataEnvelope<SessionInfoWire>.self, body)?.data.title
    }

    public var permissionReplyRoutes: [PermissionReplyRoute] { [.two] }

    public func questionReplyPath(_ request: AskedQuestion, _ reply: QuestionReply) -> String {
        "/api/session/\(request.sessionID)/question/\(request.id)/\(reply.verb)"
    }

    /// 2.x's router answers an unknown route with an empty 404; its reply routes exist in every 2.x.
    public func replyNotFound(body: [UInt8]) -> PermissionReplyOutcome { body.isEmpty ? .routeMissing : .gone }

    /// The sessions seen working that `GET /api/session/active` no longer lists, judged by their
    /// logs (`GET /api/session/:id/log?after=SEQ`); nothing when the active list cannot be had.
    public func endedTurns(_ watch: inout AgentSessionWatch, directories: [String], read: OpenCodeRead) -> [AgentMoment]
    {
        guard let body = read.get("/api/session/active", nil),
            let active = ActiveAgentSessions.parse(body, secrets: read.secrets)
        else {
            return []
        }
        var logs: [String: AgentSessionLog] = [:]
        for (session, after) in watch.logsToRead(active: active, limit: CatchUp.logLimit) where read.timeLeft() {
            let path = "/api/session/\(session)/log" + (after.map { "?after=\($0)" } ?? "")
            guard let body = read.get(path, nil),
                let log = AgentSessionLog.parse(body, session: session, secrets: read.secrets)
            else {
                continue
            }
            logs[session] = log
        }
        return watch.caughtUp(active: active, logs: logs)
    }

    public var hasPairLinks: Bool { true }

    public var passwordNeededText: String {
        "OpenCode 2 asks for a password: set OPENCODE_PASSWORD to the one `opencode serve` printed (or the one it was started with), "
            + "or put it in a file only you can read and give --password-file PATH."
    }

    public var passwordRefusedHint: String {
        "use the password `opencode serve` printed at its last start (it makes a new one each start unless OPENCODE_PASSWORD is set "
            + "there), or the background service's (`opencode service get password` at home)"
    }

    /// One entry of 2.x's permission list.
    typealias Request = PermissionEntryWire<RequestKeys>
    /// 2.x's names for a pending permission's fields.
    enum RequestKeys: String, PermissionEntryKeys { case id, sessionID, kind = "action", patterns = "resources" }
}
