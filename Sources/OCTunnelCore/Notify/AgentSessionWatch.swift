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
///   `permission.updated` (older 1.x), `question.asked` (`question.v2.asked` in 2.x): once per request id.
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
///
/// Bounded whatever the stream sends (issue 48): at most `Limits.sessions` sessions are kept (the
/// least recently heard of go first, idle ones before busy ones), each text is kept redacted and
/// cut where it is stored (`KeptText`), the requests and errors already told are remembered up
/// to a bound, and an event costs the same whether 10 or 20,000 sessions were seen: only the
/// sessions waiting out their settle time are looked at, and only when the first is due.
public struct AgentSessionWatch: Sendable {
    /// Seconds an idle must hold before it counts as finished.
    public var settle = 0.5
    /// What is redacted from every text kept (the OpenCode password and its Basic token).
    let secrets: [String]

    /// The bounds on what the watch keeps.
    enum Limits {
        /// Sessions kept; past it, a quarter goes at once.
        static let sessions = 2000
        /// Bytes of a title, a directory, a request's words, an error's message as kept.
        static let title = 256, directory = 512, detail = 512
        /// Bytes of an id (a session's, a request's, a tool call's).
        static let id = 200
        /// Tool calls tracked per session.
        static let tools = 64
        /// Requests and errors remembered as told.
        static let told = 4096
        /// Requests counted as waiting.
        static let waiting = 1000
    }

    /// Sessions kept at most (`Limits.sessions`), for the lists read beside the stream.
    public static var sessionLimit: Int { Limits.sessions }

    public init(settle: Double = 0.5, secrets: [String] = []) {
        self.settle = settle
        self.secrets = secrets
    }

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
        /// When the stream last spoke of it (the order of `sessions`' eviction).
        var heard = 0
        /// 2.x: the last seq of its durable log seen (on the stream or in a catch-up's read).
        var logSeq: Int?
    }

    private var sessions: [String: Session] = [:]
    /// The sessions whose `idleSince` is set, and the earliest of those times.
    private var settling = Set<String>()
    private var earliestIdle: Double?
    /// Counts the events, for `Session.heard`.
    private var heard = 0
    private var toldPermissions = BoundedSet<String>(capacity: Limits.told)
    private var toldErrors = BoundedSet<String>(capacity: Limits.told)
    /// Counts the requests that came without an id.
    private var unnamed = 0
    /// The requests that wait for an answer, and their sessions.
    private var waiting: [String: String] = [:]

    /// How many sessions are kept (at most `Limits.sessions`).
    var sessionCount: Int { sessions.count }

    /// The stream (re)connected: which tools still run is unknown now; busy sessions stay busy.
    public mutating func reconnected() {
        for id in sessions.keys { sessions[id]?.runningTools = [] }
    }

    /// Peer text as kept: redacted, cut to `bytes`.
    private func kept(_ text: String, _ bytes: Int) -> String { KeptText.kept(text, bytes: bytes, secrets: secrets) }

    /// The request `event` says was answered (`permission.replied`, `question.replied`, …), or nil.
    static func answeredRequest(_ event: OpenCodeEvent) -> String? {
        guard answers.contains(event.type) else { return nil }
        return event.string(.requestID) ?? event.string(.permissionID) ?? event.string(.id)
    }

    /// The moments `event` makes now.
    mutating func feed(_ event: OpenCodeEvent, now: Double, at date: Date = Date()) -> [AgentMoment] {
        if Self.answers.contains(event.type) {
            // Answered (here, in OpenCode's UI, anywhere): no longer waits. 1.x names the request
            // requestID (older: permissionID), 2.x id.
            if let request = Self.answeredRequest(event) { waiting[kept(request, Limits.id)] = nil }
            return []
        }
        guard let whole = event.sessionID else { return [] }
        let id = kept(whole, Limits.id)
        heard += 1
        var session = sessions[id] ?? Session()
        session.heard = heard
        defer { store(session, as: id) }
        if let directory = event.directory ?? event.string(.directory) {
            session.directory = kept(directory, Limits.directory)
        }
        if let seq = event.seq { session.logSeq = max(session.logSeq ?? seq, seq) }
        switch event.type {
        case "session.execution.started":
            working(&session)
        case "session.execution.interrupted":
            // A user's stop (or OpenCode shutting down): the turn is over, nothing to tell.
            answered(in: id)
            session.busy = false
            session.idleSince = nil
        case "session.created", "session.updated":
            if let title = event.fields.info?.text[.title] ?? event.fields.text[.title] {
                session.title = kept(title, Limits.title)
            }
            if let parent = event.fields.info?.text[.parentID] ?? event.fields.text[.parentID] {
                session.parent = kept(parent, Limits.id)
            }
        case "session.status":
            let status = event.fields.status?.type
            if status == "idle" { noteIdle(&session, now: now) } else if status != nil { working(&session) }
        case "session.idle":
            noteIdle(&session, now: now)
        case "session.execution.succeeded":
            answered(in: id)
            guard session.busy || session.idleSince != nil else { return [] }
            session.busy = false
            session.idleSince = nil
            guard session.parent == nil else { return [] }
            return [moment(.finished, id, session, detail: nil, at: date)]
        case "session.execution.failed":
            answered(in: id)
            session.busy = false
            session.idleSince = nil
            let message = event.fields.text[.message] ?? event.fields.error?.message
            let key =
                "\(id)|execution|\(kept(message ?? "", Limits.detail))|\(kept(event.string(.id) ?? "", Limits.id))"
            guard toldErrors.insert(key) else { return [] }
            return [moment(.failed, id, session, detail: message ?? "the turn failed", at: date)]
        case let type
        where type.hasPrefix("session.tool.") || type.hasPrefix("session.text.") || type.hasPrefix("session.reasoning."):
            let call = kept(event.string(.callID) ?? event.string(.id) ?? "", Limits.id)
            if type.hasSuffix(".started") || type.hasSuffix(".called") || type.hasSuffix(".progress") {
                if type.hasPrefix("session.tool.") { toolRuns(call, in: &session) }
            } else if type.hasSuffix(".success") || type.hasSuffix(".failed") {
                session.runningTools.remove(call)
            }
            working(&session)
        case "message.part.updated", "message.part.delta", "message.updated":
            partUpdated(event, in: &session)
        case "permission.asked", "permission.updated", "permission.v2.asked", "question.asked", "question.v2.asked":
            return asked(event, in: id, session, at: date)
        case "session.error":
            return sessionError(event, in: id, &session, at: date)
        default:
            break
        }
        return []
    }

    /// A message part changed: a tool part running or pending runs, else it ended; a session
    /// that was busy or idle is working again.
    private mutating func partUpdated(_ event: OpenCodeEvent, in session: inout Session) {
        if let part = event.fields.part, part.text[.type] == "tool" {
            let call = kept(part.text[.callID] ?? part.text[.id] ?? "", Limits.id)
            let status = part.stateStatus
            if status == "running" || status == "pending" {
                toolRuns(call, in: &session)
            } else {
                session.runningTools.remove(call)
            }
        }
        if session.busy || session.idleSince != nil { working(&session) }
    }

    /// A permission request or a question: told once per request id, noted as waiting.
    private mutating func asked(
        _ event: OpenCodeEvent, in id: String, _ session: Session, at date: Date
    ) -> [AgentMoment] {
        let named = event.string(.id).map { kept($0, Limits.id) }
        let request = named ?? unnamedRequest(id)
        waits(request, in: id)
        guard toldPermissions.insert(request) else { return [] }
        guard event.type.hasPrefix("question.") else {
            var asked = moment(.permission, id, session, detail: Self.permissionDetail(event.fields), at: date)
            asked.permissionID = named
            return [asked]
        }
        let question = event.fields.question?.questions?.first??.question ?? "it asks a question"
        var asked = moment(.permission, id, session, detail: question, at: date)
        asked.question = event.fields.question.flatMap(AskedQuestion.init(wire:))
        return [asked]
    }

    /// `session.error`: failed with the error's name and message, once; a user's abort and a
    /// context overflow (OpenCode compacts and goes on) are not failures.
    private mutating func sessionError(
        _ event: OpenCodeEvent, in id: String, _ session: inout Session, at date: Date
    ) -> [AgentMoment] {
        let error = event.fields.error
        let name = error?.name ?? "error"
        answered(in: id)
        guard name != "MessageAbortedError", name != "ContextOverflowError" else { return [] }
        let message = error?.dataMessage
        let key =
            "\(id)|\(kept(name, Limits.id))|\(kept(message ?? "", Limits.detail))|\(kept(event.string(.id) ?? "", Limits.id))"
        guard toldErrors.insert(key) else { return [] }
        session.busy = false
        session.idleSince = nil
        return [moment(.failed, id, session, detail: message.map { "\(name): \($0)" } ?? name, at: date)]
    }

    /// The permission moments a cut hid (issue 48, "nothing missed across a cut"): each request
    /// and question of `pending` (OpenCode's lists, asked as the stream came back) not told
    /// before, told now, with its id, and noted as waiting; one told before the cut, on the
    /// stream or by an earlier catch-up, is not told again. Its words say it was asked while
    /// nobody listened, and how long before `date` where its id tells.
    public mutating func caughtUp(_ pending: PendingPermissionList, at date: Date = Date()) -> [AgentMoment] {
        var moments: [AgentMoment] = []
        let asked =
            pending.items.map { ($0.id, $0.sessionID, $0.directory, $0.sessionTitle, $0.asked, $0.askedAt, true) }
            + pending.questions.map { ($0.id, $0.sessionID, $0.directory, $0.sessionTitle, $0.text, $0.askedAt, false) }
        for (whole, wholeSession, directory, title, what, askedAt, isPermission) in asked {
            let request = kept(whole, Limits.id), session = kept(wholeSession, Limits.id)
            waits(request, in: session)
            guard toldPermissions.insert(request) else { continue }
            var known = sessions[session] ?? Session()
            if known.title == nil, let title { known.title = kept(title, Limits.title) }
            if known.directory == nil, let directory { known.directory = kept(directory, Limits.directory) }
            let when = askedAt.map { ", \(PendingPermission.ago(max(0, date.timeIntervalSince($0))))" } ?? ""
            var moment = moment(
                .permission, session, known, detail: "\(what) (asked while you were away\(when))", at: date)
            if isPermission { moment.permissionID = request }
            moments.append(moment)
        }
        return moments
    }

    /// The sessions OpenCode 1.x says work, from `GET /session/status`'s answer
    /// (`{sessionID: {"type": "busy"|"retry"|…}}`, the idle ones left out:
    /// packages/opencode/src/session/status.ts), ids kept as the watch keeps them; nil for a body
    /// of another shape, or one naming more than `Limits.sessions` (a list cut short cannot say
    /// that a session is absent).
    public func working(in body: [UInt8]) -> Set<String>? {
        guard body.count <= 1 << 20, let object = decodeWire([String: SessionStatusWire].self, body),
            object.count <= Limits.sessions
        else { return nil }
        var working = Set<String>()
        for (id, status) in object where status.type != "idle" { working.insert(kept(id, Limits.id)) }
        return working
    }

    /// The sessions that finished while the stream was cut (issue 48): each seen working before
    /// it (busy, or idle not yet settled) whose directory was asked (`working`'s keys: a
    /// directory, or nil for the server's own) and that OpenCode no longer lists as working
    /// there. Told as finished "while you were away", once; a subagent's session never.
    public mutating func caughtUp(working: [String?: Set<String>], at date: Date = Date()) -> [AgentMoment] {
        var moments: [AgentMoment] = []
        for (id, session) in sessions.sorted(by: { $0.key < $1.key }) where session.busy || session.idleSince != nil {
            guard let listed = working[session.directory], !listed.contains(id) else { continue }
            sessions[id]?.busy = false
            sessions[id]?.idleSince = nil
            settling.remove(id)
            answered(in: id)
            guard session.parent == nil else { continue }
            moments.append(
                moment(
                    .finished, id, session,
                    detail: "the agent is done and waits for you (finished while you were "
                        + "away)", at: date))
        }
        return moments
    }

    /// 2.x: the sessions whose durable logs a catch-up reads (issue 48), with the seq to read
    /// after: each seen working before the cut that `active` (`GET /api/session/active`) no
    /// longer lists, its id route-safe, the most recently heard of first, at most `limit`.
    public func logsToRead(active: Set<String>, limit: Int = 8) -> [(session: String, after: Int?)] {
        sessions.filter { (id, session) in
            (session.busy || session.idleSince != nil) && !active.contains(id) && PendingPermission.isRouteSafe(id)
        }
        .sorted { ($0.value.heard, $0.key) > ($1.value.heard, $1.key) }
        .prefix(limit)
        .map { ($0.key, $0.value.logSeq) }
    }

    /// 2.x: the turns that ended while the stream was cut (issue 48), from `active` (the sessions
    /// OpenCode runs now) and `logs` (each session's log read after the seq last seen). A session
    /// seen working that `active` no longer lists and whose log's last execution step past that
    /// seq is `session.execution.succeeded` finished "while you were away"; `failed` failed with
    /// its message; `interrupted` ended quietly. Each is told once: the session is no longer
    /// working after it, and its log's seq is remembered, so an entry told live or in an earlier
    /// catch-up is never read as new. A session heard of before that `active` lists is working
    /// (its end, live or in the next catch-up, is told); one never heard of stays unknown (whether
    /// it is a subagent's is not known); a subagent's end is never told; a session whose log was not read
    /// (or was read to no execution step) is judged next time.
    public mutating func caughtUp(
        active: Set<String>, logs: [String: AgentSessionLog], at date: Date = Date()
    ) -> [AgentMoment] {
        for id in active.sorted() {
            guard var session = sessions[id], !session.busy || session.idleSince != nil else { continue }
            working(&session)
            heard += 1
            session.heard = heard
            store(session, as: id)
        }
        var moments: [AgentMoment] = []
        for (id, read) in logs.sorted(by: { $0.key < $1.key }) {
            guard var session = sessions[id], session.busy || session.idleSince != nil, !active.contains(id) else {
                continue
            }
            let seen = session.logSeq
            if let seq = read.seq { session.logSeq = max(seen ?? seq, seq) }
            guard let last = read.last, seen.map({ last.seq > $0 }) ?? true else {
                sessions[id] = session
                continue
            }
            let when = last.created.map { ", \(PendingPermission.ago(max(0, date.timeIntervalSince($0))))" } ?? ""
            let detail: String
            let kind: AgentMoment.Kind
            switch last.step {
            case .started:
                sessions[id] = session
                continue
            case .interrupted:
                (kind, detail) = (.finished, "")
            case .succeeded:
                (kind, detail) = (
                    .finished, "the agent is done and waits for you (finished while you were away\(when))"
                )
            case .failed(let message):
                let key = "\(id)|execution|\(kept(message, Limits.detail))|seq \(last.seq)"
                (kind, detail) = (
                    .failed, toldErrors.insert(key) ? "\(message) (failed while you were away\(when))" : ""
                )
            }
            session.busy = false
            session.idleSince = nil
            store(session, as: id)
            answered(in: id)
            guard session.parent == nil, !detail.isEmpty else { continue }
            moments.append(moment(kind, id, session, detail: detail, at: date))
        }
        return moments
    }

    /// The project directories sessions were seen in (1.x keeps pending requests per directory),
    /// at most `limit` of them, in order.
    func directories(limit: Int = 8) -> [String] {
        Array(Set(sessions.values.compactMap(\.directory)).sorted().prefix(limit))
    }

    /// The "finished" moments whose idle has held for `settle` seconds by `now`, in the order
    /// of their sessions' ids. Looks at nothing before the first is due.
    public mutating func due(now: Double, at date: Date = Date()) -> [AgentMoment] {
        guard let earliestIdle, now - earliestIdle >= settle else { return [] }
        var moments: [AgentMoment] = []
        var earliest: Double?
        for id in settling.sorted() {
            guard let session = sessions[id], let since = session.idleSince else { settling.remove(id); continue }
            guard now - since >= settle else {
                earliest = min(earliest ?? since, since)
                continue
            }
            sessions[id]?.idleSince = nil
            sessions[id]?.busy = false
            settling.remove(id)
            answered(in: id)
            guard session.parent == nil else { continue }
            moments.append(moment(.finished, id, session, detail: nil, at: date))
        }
        self.earliestIdle = earliest
        return moments
    }

    /// A moment of session `id`, named by what the stream said of it; `detail` kept as texts are.
    private func moment(
        _ kind: AgentMoment.Kind, _ id: String, _ session: Session, detail: String?, at date: Date
    ) -> AgentMoment {
        AgentMoment(
            kind: kind, sessionID: id, title: session.title, directory: session.directory,
            detail: detail.map { kept($0, Limits.detail) }, at: date)
    }

    /// When the next idle becomes due, if one waits.
    var nextDue: Double? { earliestIdle.map { $0 + settle } }

    /// Keeps `session` as `id`, noting whether it settles; past `Limits.sessions`, drops a
    /// quarter of them (never `id`): those not waiting for anything (not busy) first, the
    /// least recently heard of first. A sort per quarter of the cap, not per event.
    private mutating func store(_ session: Session, as id: String) {
        sessions[id] = session
        if let since = session.idleSince {
            settling.insert(id)
            earliestIdle = min(earliestIdle ?? since, since)
        } else {
            settling.remove(id)
        }
        guard sessions.count > Limits.sessions else { return }
        let keep = Limits.sessions * 3 / 4
        // Ranked by plain numbers (waiting or not, when heard of): sorting the sessions themselves
        // copied each one's strings and sets, and was most of the cost of 20,000 sessions.
        var ranked: [(waits: Int, heard: Int, id: String)] = []
        ranked.reserveCapacity(sessions.count)
        for (other, kept) in sessions where other != id {
            ranked.append((kept.busy || kept.idleSince != nil ? 1 : 0, kept.heard, other))
        }
        ranked.sort { ($0.waits, $0.heard) < ($1.waits, $1.heard) }
        for dropped in ranked.prefix(sessions.count - keep) {
            sessions[dropped.id] = nil
            settling.remove(dropped.id)
        }
    }

    /// The events that say a request was answered (or rejected).
    static let answers: Set<String> = [
        "permission.replied", "permission.v2.replied", "question.replied", "question.rejected",
        "question.v2.replied", "question.v2.rejected",
    ]

    /// How many permission requests and questions wait for an answer, as far as this stream told
    /// (at most `Limits.waiting`): asked, and neither answered nor ended with their session.
    public var waitingCount: Int { waiting.count }

    /// Notes `request` of `session` as waiting, up to `Limits.waiting`.
    private mutating func waits(_ request: String, in session: String) {
        guard waiting[request] != nil || waiting.count < Limits.waiting else { return }
        waiting[request] = session
    }

    /// The session ended its turn (finished, failed, aborted): nothing of it waits any more.
    private mutating func answered(in session: String) {
        guard waiting.values.contains(session) else { return }
        waiting = waiting.filter { $0.value != session }
    }

    /// Notes a running tool call, up to `Limits.tools` per session.
    private func toolRuns(_ call: String, in session: inout Session) {
        guard session.runningTools.count < Limits.tools else { return }
        session.runningTools.insert(call)
    }

    /// A key for a request that came without an id: each such request is told.
    private mutating func unnamedRequest(_ session: String) -> String {
        unnamed += 1
        return "\(session)#\(unnamed)"
    }

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
    static func permissionDetail(_ fields: OpenCodeEvent.Fields) -> String {
        if let title = fields.text[.title], !title.isEmpty { return title }
        if let reason = fields.text[.reason], !reason.isEmpty { return reason }
        let what = fields.text[.permission] ?? fields.text[.action] ?? fields.text[.type] ?? "a permission"
        let patterns =
            fields.patterns ?? fields.resources ?? fields.text[.pattern].map { [$0] } ?? fields.patternList ?? []
        return patterns.isEmpty ? what : "\(what): \(patterns.prefix(3).joined(separator: ", "))"
    }
}
