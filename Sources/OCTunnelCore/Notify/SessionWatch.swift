import Foundation

/// Turns OpenCode's events into the three moments (`AgentMoment`), one per moment, not one per
/// event. Pure: the time is given.
///
/// - **finished**: the session went idle (`session.status` idle, or the deprecated `session.idle`
///   published right after it: one counts) after it was seen busy on this stream, no tool of it
///   still running, and no sign of work (busy again, a part or delta, a tool event) within
///   `settle` seconds after: an idle that flashes by while the agent works is not "finished".
///   2.x's `session.execution.succeeded` is the end of the turn at once. Subagent sessions (with
///   a `parentID`) never finish alone (OpenCode's desktop app and push relay skip them too).
/// - **permission**: `permission.asked` (newer 1.x and 2.x), `permission.v2.asked` (2.x),
///   `permission.updated` (older 1.x), `question.asked`: once per request id.
/// - **failed**: `session.error` with its error's name and `data.message`, except a user's abort
///   (`MessageAbortedError`) and `ContextOverflowError` (OpenCode compacts and goes on), as
///   OpenCode's own push relay does; 2.x's `session.execution.failed` with its message.
///
/// Event names and fields: packages/opencode/src/session/status.ts, session/index.ts,
/// permission/, question/ (1.x) and packages/protocol's event groups (2.x) upstream.
///
/// Nothing before the stream connected can count: "finished" needs "busy" seen first, and
/// permission ids and errors already told are kept across reconnects, so a reconnect never
/// repeats one. A session seen busy before a reconnect (the VPS restarted, the laptop moved)
/// that goes idle after it has finished, and is told so: the user waits for exactly that. Its
/// tools are forgotten at the reconnect (their ends may have been missed, and a tool never seen
/// to end would hold "finished" back for good).
public struct SessionWatch: Sendable {
    /// Seconds an idle must hold before it counts as finished.
    public var settle = 0.5

    public init(settle: Double = 0.5) { self.settle = settle }

    /// `feed` with one event's `data:` as it came on the stream (any version's shape); nothing
    /// for data that is not one of OpenCode's events.
    public mutating func feed(data: String, now: Double) -> [AgentMoment] {
        guard let event = OpenCodeEvent(data: data) else { return [] }
        return feed(event, now: now)
    }

    private struct Session: Sendable {
        var title: String?
        var directory: String?
        var parent: String?
        var busy = false
        var runningTools = Set<String>()
        /// When an idle was seen that may become "finished".
        var idleSince: Double?
    }

    private var sessions: [String: Session] = [:]
    private var toldPermissions = Set<String>()
    private var toldErrors = Set<String>()

    /// The stream (re)connected: which tools still run is unknown now; busy sessions stay busy.
    public mutating func reconnected() {
        for id in sessions.keys { sessions[id]?.runningTools = [] }
    }

    /// The moments `event` makes now.
    mutating func feed(_ event: OpenCodeEvent, now: Double, at date: Date = Date()) -> [AgentMoment] {
        guard let id = event.sessionID else { return [] }
        var session = sessions[id] ?? Session()
        defer { sessions[id] = session }
        if let directory = event.directory ?? event.string("directory") { session.directory = directory }
        switch event.type {
        case "session.created", "session.updated":
            if let title = (event.fields["info"] as? [String: Any])?["title"] as? String ?? event.fields["title"] as? String { session.title = title }
            if let parent = (event.fields["info"] as? [String: Any])?["parentID"] as? String ?? event.fields["parentID"] as? String { session.parent = parent }
        case "session.status":
            let status = (event.fields["status"] as? [String: Any])?["type"] as? String ?? event.fields["status"] as? String
            if status == "idle" { noteIdle(&session, now: now) } else if status != nil { working(&session) }
        case "session.idle":
            noteIdle(&session, now: now)
        case "session.execution.succeeded":
            guard session.busy || session.idleSince != nil else { return [] }
            session.busy = false
            session.idleSince = nil
            guard session.parent == nil else { return [] }
            return [moment(.finished, id, session, detail: nil, at: date)]
        case "session.execution.failed":
            session.busy = false
            session.idleSince = nil
            let message = event.fields["message"] as? String ?? (event.fields["error"] as? [String: Any])?["message"] as? String
            let key = "\(id)|execution|\(message ?? "")|\(event.string("id") ?? "")"
            guard toldErrors.insert(key).inserted else { return [] }
            return [moment(.failed, id, session, detail: message ?? "the turn failed", at: date)]
        case let type where type.hasPrefix("session.tool.") || type.hasPrefix("session.text.") || type.hasPrefix("session.reasoning."):
            let call = event.string("callID") ?? event.string("id") ?? ""
            if type.hasSuffix(".started") || type.hasSuffix(".called") || type.hasSuffix(".progress") {
                if type.hasPrefix("session.tool.") { session.runningTools.insert(call) }
            } else if type.hasSuffix(".success") || type.hasSuffix(".failed") {
                session.runningTools.remove(call)
            }
            working(&session)
        case "message.part.updated", "message.part.delta", "message.updated":
            if let part = event.fields["part"] as? [String: Any], part["type"] as? String == "tool" {
                let call = part["callID"] as? String ?? part["id"] as? String ?? ""
                let status = (part["state"] as? [String: Any])?["status"] as? String
                if status == "running" || status == "pending" { session.runningTools.insert(call) } else { session.runningTools.remove(call) }
            }
            if session.busy || session.idleSince != nil { working(&session) }
        case "permission.asked", "permission.updated", "permission.v2.asked":
            let request = event.string("id") ?? "\(id)#\(toldPermissions.count)"
            guard toldPermissions.insert(request).inserted else { return [] }
            return [moment(.permission, id, session, detail: Self.permissionDetail(event.fields), at: date)]
        case "question.asked":
            let request = event.string("id") ?? "\(id)?\(toldPermissions.count)"
            guard toldPermissions.insert(request).inserted else { return [] }
            let question = ((event.fields["questions"] as? [[String: Any]])?.first?["question"] as? String) ?? "it asks a question"
            return [moment(.permission, id, session, detail: question, at: date)]
        case "session.error":
            let error = event.fields["error"] as? [String: Any]
            let name = error?["name"] as? String ?? "error"
            guard name != "MessageAbortedError", name != "ContextOverflowError" else { return [] }
            let message = (error?["data"] as? [String: Any])?["message"] as? String
            let key = "\(id)|\(name)|\(message ?? "")|\(event.string("id") ?? "")"
            guard toldErrors.insert(key).inserted else { return [] }
            session.busy = false
            session.idleSince = nil
            return [moment(.failed, id, session, detail: message.map { "\(name): \($0)" } ?? name, at: date)]
        default:
            break
        }
        return []
    }

    /// The "finished" moments whose idle has held for `settle` seconds by `now`.
    public mutating func due(now: Double, at date: Date = Date()) -> [AgentMoment] {
        var moments: [AgentMoment] = []
        for (id, session) in sessions.sorted(by: { $0.key < $1.key }) {
            guard let since = session.idleSince, now - since >= settle else { continue }
            sessions[id]?.idleSince = nil
            sessions[id]?.busy = false
            guard session.parent == nil else { continue }
            moments.append(moment(.finished, id, session, detail: nil, at: date))
        }
        return moments
    }

    /// A moment of session `id`, named by what the stream said of it.
    private func moment(_ kind: AgentMoment.Kind, _ id: String, _ session: Session, detail: String?, at date: Date) -> AgentMoment {
        AgentMoment(kind: kind, sessionID: id, title: session.title, directory: session.directory, detail: detail, at: date)
    }

    /// When the next idle becomes due, if one waits.
    var nextDue: Double? { sessions.values.compactMap(\.idleSince).min().map { $0 + settle } }

    private func noteIdle(_ session: inout Session, now: Double) {
        guard session.busy, session.runningTools.isEmpty, session.idleSince == nil else { return }
        session.idleSince = now
    }

    private func working(_ session: inout Session) {
        session.busy = true
        session.idleSince = nil
    }

    /// What a permission request asks, in a few words: its title (1.x), else the permission
    /// and its patterns (`bash` `git push`).
    static func permissionDetail(_ fields: [String: Any]) -> String {
        if let title = fields["title"] as? String, !title.isEmpty { return title }
        if let reason = fields["reason"] as? String, !reason.isEmpty { return reason }
        let what = fields["permission"] as? String ?? fields["action"] as? String ?? fields["type"] as? String ?? "a permission"
        let patterns = fields["patterns"] as? [String] ?? fields["resources"] as? [String]
            ?? (fields["pattern"] as? String).map { [$0] } ?? (fields["pattern"] as? [String]) ?? []
        return patterns.isEmpty ? what : "\(what): \(patterns.prefix(3).joined(separator: ", "))"
    }
}
