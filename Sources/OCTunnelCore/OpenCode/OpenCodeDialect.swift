import Foundation

/// Every decision that differs between OpenCode's API generations, in one place: a generation is
/// one conformer (`OpenCodeOne`, `OpenCodeTwo`), and a new one is one new file: the compiler names
/// each requirement it must answer, and nothing outside this room switches on a generation.
///
/// What the server sends is decoded into the types of `OpenCodeWire.swift`; a dialect only says
/// where to ask, which envelope and field names its answers use, and what its answers mean.
public protocol OpenCodeDialect: Sendable {
    /// The major version: 1, 2.
    var number: Int { get }

    // MARK: Health
    /// The routes that tell the version, in the order tried.
    var healthRoutes: [String] { get }
    /// The version a 200 from `path` (one of `healthRoutes`) names when it is this generation's healthy answer.
    func version(healthy path: String, body: [UInt8]) -> String?
    /// The server's own port, when the health answer from `path` names it (2.x's `/api/info`).
    func serverPort(health path: String, body: [UInt8]) -> Int?
    /// Whether a 401's `body` names this generation (2.x: `{"_tag":"UnauthorizedError"}`).
    func namesItself(refusal body: [UInt8]) -> Bool
    /// Whether an unnamed 401 on one of its own routes says this generation (1.x: yes; 2.x always names itself).
    var ownsUnnamedRefusals: Bool { get }
    /// Whether its own (named) 401 proves a running server of this generation, so a health test
    /// without a password passes with `passwordAsked` (2.x: a user signed in by pair link has none).
    var refusalProvesServer: Bool { get }
    /// The event streams to try, in order.
    var eventPaths: [String] { get }
    /// One event's `data:`, in the shape this generation's streams send, in octunnel's words.
    func event(data: String) -> OpenCodeEvent?

    // MARK: What waits
    /// The pending permissions' list route.
    var permissionListPath: String { get }
    /// The pending questions' list route.
    var questionListPath: String { get }
    /// The permissions of a list answer; an entry octunnel cannot read is nil; nil for another shape.
    func pendingPermissions(_ body: [UInt8]) -> [PermissionRequestWire?]?
    /// The questions of a list answer, as `pendingPermissions`.
    func pendingQuestions(_ body: [UInt8]) -> [QuestionRequestWire?]?
    /// The route of one session (its title).
    func sessionPath(_ session: String) -> String
    /// A session's title from its route's answer.
    func sessionTitle(_ body: [UInt8]) -> String?

    // MARK: Replies
    /// The routes a permission's reply is sent to, in order: the next only when one is missing.
    var permissionReplyRoutes: [PermissionReplyRoute] { get }
    /// The route of a question's reply (`reply` or `reject`).
    func questionReplyPath(_ request: AskedQuestion, _ reply: QuestionReply) -> String
    /// What a 404 without a known error tag means on its reply routes.
    func replyNotFound(body: [UInt8]) -> PermissionReplyOutcome

    // MARK: Catch-up
    /// The turns that ended while nobody followed the stream, asked with `read` (the sessions'
    /// statuses, or the active list and logs), judged by `watch`.
    func endedTurns(_ watch: inout AgentSessionWatch, directories: [String], read: OpenCodeRead) -> [AgentMoment]

    // MARK: Words and links
    /// Whether its `opencode pair` links name the server's own port (`PairPort`).
    var hasPairLinks: Bool { get }
    /// What to do when it asks for a password and none was given.
    var passwordNeededText: String { get }
    /// Which password to use when it refused the one given.
    var passwordRefusedHint: String { get }
}

/// A GET through the tunnel for a catch-up, within its one deadline: the body of a 200 from
/// `path` (for `directory`: nil, the server's own), or nil for any other answer or none.
public struct OpenCodeRead: Sendable {
    let get: @Sendable (_ path: String, _ directory: String?) -> [UInt8]?
    /// Whether time is left.
    let timeLeft: @Sendable () -> Bool
    let secrets: [String]

    public init(
        secrets: [String], timeLeft: @escaping @Sendable () -> Bool,
        get: @escaping @Sendable (String, String?) -> [UInt8]?
    ) {
        (self.secrets, self.timeLeft, self.get) = (secrets, timeLeft, get)
    }
}
