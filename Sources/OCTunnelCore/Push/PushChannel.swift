import Foundation

/// Pushes moments to a phone through ntfy: one message per moment, already redacted and admitted
/// by the notifier's bounds, with buttons that answer it (each an `http` action posting a
/// single-use nonce to the reply topic on the same server, so the phone needs nothing but the
/// ntfy server). The OpenCode password never leaves: every text is redacted again with `secrets`
/// and the encoded body checked (`NtfyMessage.body`).
public final class PushChannel: @unchecked Sendable {
    public let settings: PushSettings
    public let book: NonceBook
    private let token: String?
    private let secrets: [String]
    private let http: PushHTTP
    private let notice: PushNotice
    /// The moments pushed with buttons, by request id, for the follow-up's words (bounded).
    private let asked = Locked<[(id: String, moment: AgentMoment)]>([])

    /// A channel through `settings`; `timeout`: seconds a publish may take before its answer counts as lost.
    public init(
        settings: PushSettings, token: String?, secrets: [String], book: NonceBook = NonceBook(), timeout: Double = 15
    ) {
        (self.settings, self.token, self.book) = (settings, token, book)
        self.secrets = secrets.filter { !$0.isEmpty }
        var options = PushHTTPOptions(caFile: settings.caFile)
        options.timeout = timeout
        http = PushHTTP(options: options)
        notice = PushNotice(detail: settings.detail)
    }

    /// Pushes `kept` once: a try after one that failed first reads the topic for its id, and sends
    /// nothing when that try reached ntfy after all (its answer lost: a timeout, a cut).
    public func push(_ kept: inout KeptPush) throws(PushError) -> KeptPush.Outcome {
        if let tried = kept.tried, try isOnTopic(tag: kept.tag, since: tried) { return .foundOnTopic }
        if kept.tried == nil { kept.tried = Date() }
        try push(kept.moment, tags: [kept.tag])
        return .sent
    }

    /// Pushes `moment` (one ntfy message; buttons when it can be answered), `tags` added to its own.
    public func push(_ moment: AgentMoment, tags extra: [String] = []) throws(PushError) {
        let moment = moment.redacted(secrets)
        let (title, message) = notice.words(for: moment)
        let (priority, tags) = notice.look(for: moment)
        var actions: [NtfyMessage.Action] = []
        if let requestID = notice.requestID(of: moment), PendingPermission.isRouteSafe(requestID) {
            let answers = notice.answers(for: moment)
            let nonces = book.issue(requestID: requestID, directory: moment.directory, answers: answers)
            actions = zip(answers, nonces).map { answer, nonce in
                button(
                    notice.label(answer, secrets: secrets),
                    PushTap(requestID: requestID, nonce: nonce, sender: book.sender))
            }
            if !actions.isEmpty { remember(requestID, moment) }
        }
        try send(
            NtfyMessage(
                topic: settings.url.topic ?? "", title: title, message: message, priority: priority, tags: tags + extra,
                actions: actions))
    }

    /// Says on the phone that request `requestID` was answered elsewhere (the laptop, a terminal,
    /// OpenCode's UI) and retires its buttons; nothing for a request that got no buttons.
    public func answeredElsewhere(requestID: String) throws(PushError) {
        var moment: AgentMoment?
        asked.update { list in
            moment = list.first { $0.id == requestID }?.moment
            list.removeAll { $0.id == requestID }
        }
        guard let moment else { return }
        book.retire(requestID: requestID)
        let (title, message) = notice.answeredElsewhere(moment)
        try send(
            NtfyMessage(
                topic: settings.url.topic ?? "", title: title, message: message, priority: 2, tags: ["heavy_check_mark"]
            ))
    }

    /// Whether a push with a button for request `requestID` is on the topic already, sent in the last
    /// `seconds` (by the other end: `home up` beside `tunnel up`). Found in the buttons' bodies (a
    /// bounded poll, `GET /TOPIC/json?poll=1&since=…`); a topic too full to read says no.
    public func alreadyPushed(requestID: String, seconds: Int = 120) throws(PushError) -> Bool {
        try recent(seconds: seconds).contains { object in
            ((object["actions"] as? [[String: Any]]) ?? []).contains {
                ($0["body"] as? String).flatMap(PushTap.parse)?.requestID == requestID
            }
        }
    }

    /// Whether a message tagged `tag` reached the topic since `since` (a minute's margin for the
    /// server's clock; ntfy counts `since=Ns` from its own).
    public func isOnTopic(tag: String, since: Date) throws(PushError) -> Bool {
        try recent(seconds: Int(max(0, Date().timeIntervalSince(since))) + 60).contains {
            (($0["tags"] as? [String]) ?? []).contains(tag)
        }
    }

    /// The topic's messages of the last `seconds` (`GET /TOPIC/json?poll=1&since=Ns`, one bounded answer).
    private func recent(seconds: Int) throws(PushError) -> [[String: Any]] {
        let request = PushHTTPRequest(method: "GET", url: settings.url, headers: PushToken.headers(token)).at(
            "/json?poll=1&since=\(seconds)s")
        let answer = try http.send(request)
        try Self.judge(answer, url: settings.url, hasToken: token != nil, secrets: secrets + [token].compactMap { $0 })
        return answer.body.split(separator: UInt8(ascii: "\n")).compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0))) as? [String: Any]
        }
    }

    /// A button that posts `tap` to the reply topic, with the token when there is one.
    func button(_ label: String, _ tap: PushTap) -> NtfyMessage.Action {
        NtfyMessage.Action(
            label: label, url: settings.replyURL.text(), headers: token.map { ["Authorization": "Bearer \($0)"] },
            body: tap.body)
    }

    /// Publishes `message` (`POST /` with its JSON) and checks the server took it.
    public func send(_ message: NtfyMessage) throws(PushError) {
        let url = settings.url.serverRoot
        let request = PushHTTPRequest(
            method: "POST", url: url, headers: PushToken.headers(token) + [("Content-Type", "application/json")],
            body: message.body(redacting: secrets))
        let answer = try http.send(request)
        try Self.judge(answer, url: url, hasToken: token != nil, secrets: secrets + [token].compactMap { $0 })
    }

    /// A listener for this channel's reply topic that sends each verified tap through `answer`.
    public func listener(answer: @escaping PushAnswerer, report: @escaping @Sendable (String) -> Void) -> ReplyListener
    {
        ReplyListener(
            url: settings.replyURL, token: token, http: http, book: book, secrets: secrets, answer: answer,
            report: report)
    }

    /// Throws unless `answer` is 200: 401/403 the token, anything else quoted (redacted).
    static func judge(_ answer: PushHTTPAnswer, url: PushURL, hasToken: Bool, secrets: [String]) throws(PushError) {
        switch answer.status {
        case 200: return
        case 401, 403: throw .tokenRefused(url: url.shown, status: answer.status, hasToken: hasToken)
        default:
            let body = OutsideText.redacting(String(decoding: answer.body.prefix(512), as: UTF8.self), secrets: secrets)
            throw .status(url: url.shown, status: answer.status, body: body)
        }
    }

    private func remember(_ requestID: String, _ moment: AgentMoment) {
        asked.update { list in
            list.removeAll { $0.id == requestID }
            list.append((requestID, moment))
            if list.count > book.capacity { list.removeFirst(list.count - book.capacity) }
        }
    }
}
