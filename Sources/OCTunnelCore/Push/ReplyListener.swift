import Foundation

/// Reads the reply topic (ntfy's JSON stream, `GET /TOPIC/json?since=…`) on a thread of its own
/// and turns each verified tap into one call of the answerer: the tap's nonce must be live in the
/// `NonceBook`, of the request the tap names (then every nonce of that request is spent). A
/// replayed, forged, expired or cross-request tap sends nothing and is said once; a tap of the other
/// end's buttons (another sender's tag: `home up` and `tunnel up` on one reply topic) is passed
/// over quietly, that end answers it. After a cut
/// (ntfy restarted, the network gone, a silent stream) it reads again from the last message it
/// saw (`since=ID`; before any, the time it started), so a tap made meanwhile is honoured once.
public final class ReplyListener: @unchecked Sendable {
    private let url: PushURL
    private let token: String?
    private let http: PushHTTP
    private let book: NonceBook
    private let secrets: [String]
    private let answer: PushAnswerer
    private let report: @Sendable (String) -> Void
    private let stopper = PushStreamStop()
    private let wake = NSCondition()
    private let state = Locked<
        (cursor: String, opened: Int, answered: Int, refused: Int, others: Int, thread: Thread?)
    >(
        ("", 0, 0, 0, 0, nil))
    private var seen = BoundedSet<String>(capacity: 1024)
    private let finished = DispatchSemaphore(value: 0)

    /// Seconds without a byte after which the stream is taken as dead (ntfy's keepalive is 45 s).
    public var silence: Double = 150
    /// Seconds between tries after a cut, doubling up to `maxBackoff`.
    public var backoff: Double = 1
    public var maxBackoff: Double = 30
    /// Called on the listener's thread each time the stream opens (the server is back: what could
    /// not be pushed meanwhile may go now). Set before `start()`.
    public var opened: (@Sendable () -> Void)?

    init(
        url: PushURL, token: String?, http: PushHTTP, book: NonceBook, secrets: [String],
        answer: @escaping PushAnswerer, report: @escaping @Sendable (String) -> Void
    ) {
        (self.url, self.token, self.http, self.book, self.secrets, self.answer, self.report) = (
            url, token, http, book, secrets, answer, report
        )
        state.update { $0.cursor = String(Int(Date().timeIntervalSince1970)) }
    }

    /// Starts reading on a thread of its own.
    public func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "octunnel push replies"
        state.update { $0.thread = thread }
        thread.start()
    }

    /// Stops reading, promptly, and waits (at most `timeout` seconds) for the thread to end.
    public func stop(timeout: Double = 5) {
        stopper.stop()
        wake.lock()
        wake.broadcast()
        wake.unlock()
        guard state.value.thread != nil else { return }
        _ = finished.wait(timeout: .now() + timeout)
    }

    /// How many taps of the other end's buttons were passed over (for tests).
    public var othersTaps: Int { state.value.others }

    /// How many times the stream opened, taps answered and taps refused (for tests and status).
    public var counts: (opened: Int, answered: Int, refused: Int) {
        let value = state.value
        return (value.opened, value.answered, value.refused)
    }

    /// Waits until the stream opened `times` times in all (at most `timeout` seconds).
    public func waitUntilOpen(times: Int = 1, timeout: Double) -> Bool {
        let deadline = Date() + timeout
        wake.lock()
        defer { wake.unlock() }
        while state.value.opened < times {
            guard wake.wait(until: deadline) else { return state.value.opened >= times }
        }
        return true
    }

    private func run() {
        var delay = backoff
        var lastSaid = ""
        while !stopper.isStopped {
            let request = PushHTTPRequest(method: "GET", url: url, headers: PushToken.headers(token)).at(
                "/json?since=\(state.value.cursor)")
            let ended: PushError?
            do {
                ended = try http.stream(request, stop: stopper, silence: silence) { [self] line in
                    handle(line)
                    delay = backoff
                    return true
                }
            } catch {
                ended = error
            }
            guard let ended, !stopper.isStopped else { break }
            let said =
                "push: the reply stream stopped ("
                + OutsideText.redacting(ended.localizedDescription, secrets: secrets + [token].compactMap { $0 }) + ")"
            if said != lastSaid {
                report(said)
                lastSaid = said
            }
            wake.lock()
            if !stopper.isStopped { _ = wake.wait(until: Date() + delay) }
            wake.unlock()
            delay = min(delay * 2, maxBackoff)
        }
    }

    /// One line of the stream: an open, a keepalive, or a message that may be a tap.
    private func handle(_ line: String) {
        guard let event = NtfyEvent.parse(line) else { return }
        if event.event == "open" {
            state.update { $0.opened += 1 }
            wake.lock()
            wake.broadcast()
            wake.unlock()
            opened?()
            return
        }
        guard event.isMessage else { return }
        state.update { $0.cursor = event.id }
        guard seen.insert(event.id) else { return }
        guard let tap = event.message.flatMap(PushTap.parse) else {
            report("push: a message on the reply topic that is not a button's tap was ignored")
            return
        }
        if let sender = tap.sender, sender != book.sender {
            state.update { $0.others += 1 }
            return
        }
        switch book.take(requestID: tap.requestID, nonce: tap.nonce) {
        case .failure(let refused):
            state.update { $0.refused += 1 }
            report(
                "push: a \(refused.refusal.rawValue) tap for request "
                    + "\(OutsideText.shown(tap.requestID, secrets: secrets, limit: 128)) sent nothing"
            )
        case .success(let entry):
            state.update { $0.answered += 1 }
            let id = OutsideText.shown(entry.requestID, secrets: secrets, limit: 128)
            do {
                try answer(entry.requestID, entry.directory, entry.answer)
                report("push: \(id) \(entry.answer.done) from the phone")
            } catch {
                let said = (error as? LocalizedError)?.errorDescription ?? "\(error)"
                report(
                    "push: the phone's answer to \(id) was not sent: \(OutsideText.shown(said, secrets: secrets, limit: 300))"
                )
            }
        }
    }
}

extension PushHTTPRequest {
    /// This request with `path` after its URL (`/json?since=…`).
    func at(_ path: String) -> PushHTTPRequest {
        var request = self
        request.suffix = path
        return request
    }
}
