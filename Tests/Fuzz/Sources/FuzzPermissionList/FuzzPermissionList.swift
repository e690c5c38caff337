import Foundation
import FuzzSupport
import OCTunnelCore

/// Parses each input as a pending-permission list (`PendingPermissionList.parse`) and a question
/// list (`PendingQuestion.parse`), and judges it
/// as a reply answer (`PermissionReplyRoute.judge`): the first byte picks the generation, the
/// reply route and the status, the rest is the body. Promises: the list holds at most `limit`
/// requests, each id and session id route-safe and without the planted password, every text
/// clean for a terminal, cut, and redacted; the rendering and the JSON are clean too; the
/// judgement is deterministic and "answered" only for a 200 `true` or a 204; the catch-up
/// after a cut (`AgentSessionWatch.caughtUp`) tells each listed request once, clean and redacted, and
/// reads 1.x's session status map (`AgentSessionWatch.working(in:)`) bounded; 2.x's active list
/// (`ActiveAgentSessions.parse`) and a session's durable log (`AgentSessionLog.parse`) are read
/// bounded and clean, and the turns they end (`AgentSessionWatch.caughtUp(active:logs:)`) are told
/// once at most, clean and redacted; a question request (`AskedQuestion`) keeps route-safe ids,
/// offers actions only as one single choice of a few labels, and its reply route
/// (`QuestionReplyRoute`) makes a path of the ids alone and a body holding exactly the label.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let first = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    let generation: OpenCodeGeneration = first & 1 == 0 ? .one : .two
    let context = { "\(generation) \(hex(body))" }
    if let list = PendingPermissionList.parse(body, generation: generation, directory: "/p", secrets: [secret]) {
        precondition(list.items.count <= PendingPermissionList.limit, context())
        for item in list.items {
            precondition(
                PendingPermission.isRouteSafe(item.id) && PendingPermission.isRouteSafe(item.sessionID), context())
            precondition(!item.id.contains(secret) && !item.sessionID.contains(secret), context())
            precondition(item.patterns.count <= PendingPermissionList.patternLimit + 1, context())
            for text in [item.kind] + item.patterns {
                // The cut counts the peer's scalars; each may show as an escape of up to 8 ("\u{200b}").
                precondition(
                    isShownClean(text) && !text.contains(secret)
                        && text.unicodeScalars.count <= PendingPermissionList.textLimit * 8 + 1, context())
            }
        }
        for line in list.humanLines(now: Date(timeIntervalSince1970: 1_795_000_000)) {
            precondition(isShownClean(line) && !line.contains(secret), context())
        }
        let json = list.jsonText(generation: generation)
        precondition(
            !json.contains(secret) && (try? JSONSerialization.jsonObject(with: Data(json.utf8))) != nil, context())
    }
    if let (questions, _) = PendingQuestion.parse(body, generation: generation, directory: nil, secrets: [secret]) {
        precondition(questions.count <= PendingPermissionList.limit, context())
        var list =
            PendingPermissionList.parse(body, generation: generation, directory: "/p", secrets: [secret])
            ?? PendingPermissionList()
        list.questions = questions
        // The catch-up after a cut (AgentSessionWatch.caughtUp): one moment per request at most, each
        // clean and without the password on every surface, and nothing told a second time.
        var watch = AgentSessionWatch(secrets: [secret])
        let moments = watch.caughtUp(list, at: Date(timeIntervalSince1970: 1_795_000_000))
        precondition(moments.count <= list.items.count + list.questions.count, context())
        for moment in moments {
            for text in [moment.line] + moment.environment.values {
                precondition(isShownClean(text) && !text.contains(secret), context())
            }
        }
        precondition(
            watch.caughtUp(list).isEmpty && watch.waitingCount <= list.items.count + list.questions.count, context())
        for item in questions {
            precondition(
                PendingPermission.isRouteSafe(item.id) && !item.id.contains(secret)
                    && item.options.count <= PendingPermissionList.patternLimit, context())
        }
        for line in list.humanLines() + [list.jsonText(generation: generation)] {
            precondition(isShownClean(line) && !line.contains(secret), context())
        }
    }
    // 1.x's GET /session/status as the catch-up reads it: at most 2000 sessions, each id kept
    // (cut, redacted); a watch that saw no session working judges none finished.
    var fresh = AgentSessionWatch(secrets: [secret])
    if let working = fresh.working(in: body) {
        precondition(
            working.count <= 2000 && working.allSatisfy { !$0.contains(secret) && $0.utf8.count <= 256 }, context())
        precondition(fresh.caughtUp(working: [nil: working, "/p": working]).isEmpty, context())
    }
    // 2.x's GET /api/session/active and GET /api/session/:id/log as the catch-up reads them (issue
    // 48): the active list bounded and its ids kept; the log's seq a JSON integer from 0, its last
    // step past the seq asked, its message clean and redacted; the turns that ended told at most
    // once per session read, clean, without the password, and a second catch-up tells nothing.
    if let active = ActiveAgentSessions.parse(body, secrets: [secret]) {
        precondition(
            active.count <= 2000 && active.allSatisfy { !$0.contains(secret) && $0.utf8.count <= 256 }, context())
    }
    if let read = AgentSessionLog.parse(body, session: "ses_b", secrets: [secret]) {
        precondition((read.seq ?? 0) >= 0 && read.last.map { $0.seq <= read.seq ?? -1 } ?? true, context())
        if case .failed(let message) = read.last?.step {
            precondition(isShownClean(message) && !message.contains(secret), context())
        }
        var watch = AgentSessionWatch(secrets: [secret])
        for session in ["ses_a", "ses_b"] {
            _ = watch.feed(
                data:
                    #"{"type":"session.execution.started","durable":{"aggregateID":"\#(session)","seq":0,"version":1},"data":{"sessionID":"\#(session)"}}"#,
                now: 0)
        }
        let asked = watch.logsToRead(active: ["ses_a"])
        precondition(
            asked.map(\.session) == ["ses_b"] && asked.allSatisfy { PendingPermission.isRouteSafe($0.session) },
            context())
        let moments = watch.caughtUp(
            active: ["ses_a"], logs: ["ses_b": read, "ses_a": read], at: Date(timeIntervalSince1970: 1_795_000_000))
        precondition(moments.count <= 1 && moments.allSatisfy { $0.sessionID == "ses_b" }, context())
        for moment in moments {
            for text in [moment.line] + moment.environment.values {
                precondition(isShownClean(text) && !text.contains(secret), context())
            }
        }
        precondition(watch.caughtUp(active: ["ses_a"], logs: ["ses_b": read]).isEmpty, "told twice: \(context())")
    }
    let route = PermissionReplyRoute.allCases[Int(first >> 1) % PermissionReplyRoute.allCases.count]
    let status = statuses[Int(first >> 3) % statuses.count]
    let outcome = route.judge(status: status, contentType: nil, body: body)
    precondition(
        outcome == route.judge(status: status, contentType: nil, body: body), "not deterministic: \(context())")
    if outcome == .answered { precondition(status == 200 || status == 204, context()) }
    if outcome == .gone { precondition(status == 404, context()) }
    // A question as the far side sends it (issue 48, answered from its notification): kept only
    // with route-safe ids, offered only as one single choice of 1 to 3 distinct labels; the
    // reply's path is made of its ids alone, its body is JSON holding exactly the label sent.
    if let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
        let asked = AskedQuestion(fields: object)
    {
        precondition(
            PendingPermission.isRouteSafe(asked.id) && PendingPermission.isRouteSafe(asked.sessionID), context())
        if asked.offersActions {
            precondition((1...AskedQuestion.actionLimit).contains(asked.labels.count) && asked.count == 1, context())
        }
        let questionRoute = QuestionReplyRoute(generation)
        for label in asked.labels.prefix(AskedQuestion.actionLimit) {
            let path = questionRoute.path(for: asked, .answer(label))
            precondition(
                !path.contains("?") && !path.contains("#") && !path.contains(" ") && !path.contains(".."), context())
            let sent =
                (try? JSONSerialization.jsonObject(with: Data(questionRoute.body(.answer(label)))))
                as? [String: [[String]]]
            precondition(sent?["answers"] == [[label]], context())
        }
        precondition(questionRoute.body(.dismiss).isEmpty, context())
        let permissionRoute: PermissionReplyRoute = generation == .one ? .one : .two
        precondition(
            questionRoute.judge(status: status, contentType: nil, body: body)
                == permissionRoute.judge(status: status, contentType: nil, body: body), context())
    }
    return 0
}

private let secret = "pw-planted-7"
private let statuses = [200, 204, 404, 401, 500, 400, 302, 403]
