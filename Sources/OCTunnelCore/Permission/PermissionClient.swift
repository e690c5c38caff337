import Foundation

/// Lists the permissions OpenCode waits on and answers one, through the tunnel's local port,
/// as each OpenCode generation serves them (`PendingPermissionList`, `PermissionReplyRoute`).
///
/// A reply is sent once: only to a request the list has just shown, and a route is tried again
/// only when OpenCode says it does not have that route. A request that is gone is said plainly.
public struct PermissionClient: Sendable {
    public let host: String
    public let port: Int
    public let credentials: OpenCodeCredentials
    /// Seconds each request may take.
    public var timeout: Double
    /// When every request must be over, whatever `timeout` says (a catch-up's one deadline).
    public var deadline: Date?
    /// The generations to try, newest first on the first list (`OpenCodeGeneration.known`).
    public var generations = OpenCodeGeneration.known

    public init(host: String, port: Int, credentials: OpenCodeCredentials, timeout: Double = 10) {
        (self.host, self.port, self.credentials, self.timeout) = (host, port, credentials, timeout)
    }

    /// The pending permissions of each of `directories` (none: the server's own project), and
    /// which OpenCode answered.
    public func list(directories: [String] = []) throws -> (generation: OpenCodeGeneration, list: PendingPermissionList)
    {
        var (generation, list) = try pending(directories: directories, questions: true)
        let sessions =
            list.items.map { ($0.sessionID, $0.directory) } + list.questions.map { ($0.sessionID, $0.directory) }
        let titles = self.titles(of: sessions, generation: generation)
        for index in list.items.indices { list.items[index].sessionTitle = titles[list.items[index].sessionID] }
        for index in list.questions.indices {
            list.questions[index].sessionTitle = titles[list.questions[index].sessionID]
        }
        return (generation, list)
    }

    /// `list` without the sessions' titles, and with the questions only when asked (a reply needs neither).
    private func pending(
        directories: [String], questions: Bool = false
    ) throws -> (
        generation: OpenCodeGeneration, list: PendingPermissionList
    ) {
        let places: [String?] = directories.isEmpty ? [nil] : directories.map { $0 }
        var generation: OpenCodeGeneration?
        var all = PendingPermissionList()
        for place in places {
            var (found, list) = try list(in: place, generation: generation)
            generation = found
            if questions, let asked = self.questions(in: place, generation: found) {
                (list.questions, list.moreQuestions) = asked
            }
            all.append(list)
        }
        return (generation ?? generations[0], all)
    }

    /// At most this many sessions are asked for their title in one list; the rest show their id.
    static let titledSessions = 10

    /// `items` with their sessions' titles, where OpenCode tells them (1.x `GET /session/:id` →
    /// `{title,…}`, 2.x `GET /api/session/:id` → `{"data":{title,…}}`); a title it does not
    /// give is left out, quietly: the list is what matters.
    private func titles(
        of sessions: [(id: String, directory: String?)], generation: OpenCodeGeneration
    ) -> [String: String] {
        var titles: [String: String] = [:]
        var asked = Set<String>()
        for (session, directory) in sessions where !asked.contains(session) && asked.count < Self.titledSessions {
            asked.insert(session)
            let path = generation.api.sessionPath(session)
            guard let (head, body) = try? probe().get(path, headers: headers(directory), limit: 1 << 20),
                head.status == 200,
                let title = generation.api.sessionTitle(body), !title.isEmpty
            else { continue }
            titles[session] = OutsideText.shown(title, secrets: credentials.secrets, limit: 80)
        }
        return titles
    }

    /// The questions waiting in `directory` (1.x `GET /question`, 2.x `GET /api/question/request`);
    /// nil when this OpenCode has no such list or cannot be asked: the permissions are what matters.
    private func questions(
        in directory: String?, generation: OpenCodeGeneration
    ) -> (items: [PendingQuestion], more: Int)? {
        let path = generation.api.questionListPath
        guard let (head, body) = try? probe().get(path, headers: headers(directory), limit: 1 << 20), head.status == 200
        else { return nil }
        return PendingQuestion.parse(body, generation: generation, directory: directory, secrets: credentials.secrets)
    }

    /// Sends `reply` to the pending permission `id` (looked for in `directories`); returns it.
    /// Throws `permissionNotPending` when OpenCode no longer has it.
    public func answer(id: String, reply: PermissionReply, directories: [String] = []) throws -> PendingPermission {
        let (generation, list) = try pending(directories: directories)
        guard let request = list.items.first(where: { $0.id == id }) else {
            // Past the list's cap it may still wait: say so rather than "gone".
            if list.more > 0 {
                throw PermissionError.permissionFailed(
                    detail: "permission \(OutsideText.shown(id, limit: 128)) is not among the first "
                        + "\(PendingPermissionList.limit) OpenCode lists (\(list.more) more wait); nothing was sent: answer it in OpenCode"
                )
            }
            throw PermissionError.permissionNotPending(id: OutsideText.shown(id, limit: 128))
        }
        for route in PermissionReplyRoute.routes(for: generation) {
            let answer = try post(route.path(for: request), body: route.body(reply), directory: request.directory)
            switch route.judge(status: answer.0.status, contentType: answer.0.headers["content-type"], body: answer.1) {
            case .answered: return request
            case .gone: throw PermissionError.permissionNotPending(id: request.id)
            case .routeMissing: continue
            case .refused(let generation): throw passwordError(generation)
            case .failed(let status, let body): throw replyFailed(status: status, body: body)
            }
        }
        throw PermissionError.permissionFailed(
            detail: "this OpenCode has none of the reply routes octunnel knows "
                + "(\(PermissionReplyRoute.routes(for: generation).map { $0.path(for: request) }.joined(separator: ", ")))"
        )
    }

    /// Sends `reply` to the pending question `id` (looked for in `directories`); returns it. Sent
    /// only to a question OpenCode lists now, and an answer only when it is one of the labels
    /// OpenCode lists for that question, which asks one question: whatever the caller stored or
    /// typed, nothing else reaches OpenCode. Sent once, never retried. Throws
    /// `questionNotPending` when OpenCode no longer has it.
    public func answerQuestion(id: String, reply: QuestionReply, directories: [String] = []) throws -> AskedQuestion {
        let shownID = OutsideText.shown(id, secrets: credentials.secrets, limit: 128)
        guard PendingPermission.isRouteSafe(id) else { throw PermissionError.questionNotPending(id: shownID) }
        let places: [String?] = directories.isEmpty ? [nil] : directories.map { $0 }
        var generation: OpenCodeGeneration?
        var found: (request: AskedQuestion, directory: String?)?
        for place in places where found == nil {
            let known = try list(in: place, generation: generation).0
            generation = known
            let path = known.api.questionListPath
            let (head, body) = try getList(path, directory: place)
            guard head.status == 200 else {
                throw PermissionError.permissionFailed(
                    detail: "OpenCode's list of pending questions answered HTTP "
                        + "\(head.status) from \(path); nothing was sent")
            }
            if let request = AskedQuestion.listed(id, in: body, generation: known) { found = (request, place) }
        }
        guard let generation, let (request, directory) = found else {
            throw PermissionError.questionNotPending(id: shownID)
        }
        if case .answer(let label) = reply {
            guard request.count == 1 else {
                throw PermissionError.permissionFailed(
                    detail: "question \(request.id) asks \(request.count) questions at once; nothing was sent: "
                        + "answer it in OpenCode")
            }
            guard request.labels.contains(label) else {
                let options = request.labels.map {
                    "\"\(OutsideText.shown($0, secrets: credentials.secrets, limit: 80))\""
                }.joined(
                    separator: ", ")
                throw PermissionError.permissionFailed(
                    detail: "\"\(OutsideText.shown(label, secrets: credentials.secrets, limit: 80))\" is not an "
                        + "option OpenCode lists for question \(request.id) (\(options.isEmpty ? "none octunnel can send" : options)); "
                        + "nothing was sent")
            }
        }
        let route = QuestionReplyRoute(generation)
        let answer = try post(route.path(for: request, reply), body: route.body(reply), directory: directory)
        switch route.judge(status: answer.0.status, contentType: answer.0.headers["content-type"], body: answer.1) {
        case .answered: return request
        case .gone: throw PermissionError.questionNotPending(id: request.id)
        case .routeMissing:
            throw PermissionError.permissionFailed(
                detail: "this OpenCode has no route to answer a question "
                    + "(\(route.path(for: request, reply))); answer it in OpenCode")
        case .refused(let generation): throw passwordError(generation)
        case .failed(let status, let body): throw replyFailed(status: status, body: body)
        }
    }

    /// One directory's list; the generation is found on the first (2.x's route, then 1.x's).
    private func list(
        in directory: String?, generation: OpenCodeGeneration?
    ) throws -> (
        OpenCodeGeneration, PendingPermissionList
    ) {
        let tries = generations.reversed().filter { generation == nil || $0 == generation }.map {
            ($0, $0.api.permissionListPath)
        }
        var refused = false
        var refusing: OpenCodeGeneration?
        var misses: [String] = []
        for (candidate, path) in tries {
            let (head, body) = try getList(path, directory: directory)
            if head.status == 200,
                let list = PendingPermissionList.parse(
                    body, generation: candidate, directory: directory, secrets: credentials.secrets)
            {
                return (candidate, list)
            }
            if head.status == 401 {
                // Only 2.x's API names itself ({"_tag":"UnauthorizedError"}); 1.x guards every path,
                // /api/… too, so an unnamed refusal says 1.x only on 1.x's own route.
                refused = true
                if let named = OpenCodeGeneration.naming(refusal: body, among: generations) { refusing = named; break }
                if candidate.api.ownsUnnamedRefusals { refusing = refusing ?? candidate }
                continue
            }
            misses.append(
                "HTTP \(head.status) from "
                    + "\(path)\(body.isEmpty ? "" : ": \(OpenCodeAnswer.preview(body, secrets: credentials.secrets))")")
        }
        if refused { throw passwordError(refusing) }
        throw PermissionError.permissionFailed(
            detail: "OpenCode's list of pending permissions is not there (\(misses.joined(separator: "; ")))")
    }

    /// GETs a list at `path` (up to 1 MiB); no answer is `permissionFailed` naming the tunnel's end.
    private func getList(_ path: String, directory: String?) throws -> (HTTPProbe.Head, [UInt8]) {
        do {
            return try probe().get(path, headers: headers(directory), limit: 1 << 20)
        } catch {
            throw PermissionError.permissionFailed(
                detail: "cannot reach OpenCode through the tunnel at \(HostPort(host: host, port: port)) "
                    + "(\(describe(error)))")
        }
    }

    /// POSTs a reply once; no answer is `permissionFailed` saying it may have been taken and is not sent again.
    private func post(_ path: String, body: [UInt8], directory: String?) throws -> (HTTPProbe.Head, [UInt8]) {
        do {
            return try probe().post(path, body: body, headers: headers(directory))
        } catch {
            throw PermissionError.permissionFailed(
                detail: "the reply got no answer (\(describe(error))); it may or may not have been taken, "
                    + "and it is not sent again: `octunnel permission list` shows whether it still waits")
        }
    }

    /// A reply OpenCode answered with another status: its status and a redacted preview of its body.
    private func replyFailed(status: Int, body: [UInt8]) -> PermissionError {
        .permissionFailed(
            detail: "OpenCode answered the reply with HTTP "
                + "\(status)\(body.isEmpty ? "" : ": \(OpenCodeAnswer.preview(body, secrets: credentials.secrets))")")
    }

    private func probe() -> HTTPProbe {
        HTTPProbe(
            host: host, port: port, deadline: min(Date(timeIntervalSinceNow: timeout), deadline ?? .distantFuture),
            authorization: credentials.authorization,
            secrets: credentials.secrets)
    }

    /// `x-opencode-directory`, as OpenCode's clients send it (percent-encoded; both generations decode it).
    private func headers(_ directory: String?) -> [(String, String)] { Self.directoryHeaders(directory) }

    /// `x-opencode-directory` for `directory` (none for the server's own).
    static func directoryHeaders(_ directory: String?) -> [(String, String)] {
        guard let directory else { return [] }
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")
        return [("x-opencode-directory", directory.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")]
    }

    private func passwordError(_ generation: OpenCodeGeneration?) -> HealthError {
        credentials.password == nil
            ? .healthNeedsPassword(generation: generation)
            : .healthPasswordRefused(
                generation: generation, username: credentials.username, source: credentials.sourceText)
    }

    private func describe(_ failure: HTTPProbe.Failure) -> String {
        switch failure {
        case .cannotConnect(let reason): reason
        case .closedWithoutAnswer: "it closed without an answer"
        case .timedOut, .silent: "no answer within \(Int(timeout)) s"
        case .malformed(let reason): reason
        }
    }
}
