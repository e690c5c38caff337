import Foundation

/// `tunnel up`'s hold on OpenCode's event stream, through the tunnel, for as long as it runs
/// (issue 40): each event goes through `AgentSessionWatch`, each moment to the `Notifier`. The health
/// test starts it after a pass, with the stream that answered; the stream is asked again when
/// it ends (a reconnect of the tunnel, OpenCode restarted), with nothing from before counted
/// twice. An answer that is not a stream (OpenCode 2 without a password here: 401) is said once,
/// with the fix, and asked again less and less often (up to every 30 s).
///
/// Asleep when nothing happens (issue 48): its thread waits for the stream's bytes, for the
/// next "finished" to settle, or for `stop()` or a move (the stream's own `StopSignal`, polled
/// beside the socket), never on a tick; OpenCode's heartbeats are its only wake-ups.
///
/// Moved with the tunnel (issue 56): after a planned reconnect the old SSH session drains until
/// its streams end, so a stream held on it would keep it (and the VPS's session process) for
/// `SessionSet.drainLimit`. A `follow` whose `movingStreamsBefore` is later than the stream's
/// start ends that stream cleanly and asks again at once, on the new session, with the catch-up
/// every cut gets: nothing is lost or told twice, and the old session drains to nothing. Each
/// stream's local port goes to `ownStream`, so a burst's extra session never takes it (it would
/// keep two sessions up for as long as the stream lives).
final class EventFollower: @unchecked Sendable {
    private let host: String
    private let port: Int
    private let credentials: OpenCodeCredentials
    private let notifier: Notifier
    private let emit: @Sendable (EngineEvent) -> Void
    /// Told how many requests wait for an answer each time that changes (`tunnel status`).
    private let waiting: @Sendable (Int) -> Void
    /// Told the local port of the stream as it connects, and nil when it ends.
    private let ownStream: @Sendable (Int?) -> Void
    private let condition = NSCondition()
    private var path: String?
    /// The generation whose stream `path` is (nil: the known one that serves it).
    private var generation: OpenCodeGeneration?
    private var running = false
    private var stopped = false
    private var said = Set<String>()
    /// What ends the current stream at once where its thread sleeps (`stop()`, a move); one per
    /// stream, nil between streams (or if no pipe could be made: then the end is seen at the
    /// stream's next bytes).
    private var streamCut: StopSignal?
    /// When the current stream started (`MonotonicClock`); nil between streams.
    private var streamSince: Double?
    /// The current stream was ended to move it: the next is asked at once, without the pause.
    private var moving = false

    init(
        host: String, port: Int, credentials: OpenCodeCredentials, notifier: Notifier,
        waiting: @escaping @Sendable (Int) -> Void = { _ in },
        ownStream: @escaping @Sendable (Int?) -> Void = { _ in },
        emit: @escaping @Sendable (EngineEvent) -> Void
    ) {
        self.waiting = waiting
        self.ownStream = ownStream
        self.host = host
        self.port = port
        self.credentials = credentials
        self.notifier = notifier
        self.emit = emit
    }

    /// Follows `path` (the event stream the health test found), read as `generation` sends it
    /// (nil: the known generation that serves `path`); starts the thread the first time. A stream
    /// already open that started before `movingStreamsBefore` (`MonotonicClock`: when the tunnel's
    /// new session came up) is ended and asked again at once, on the new session.
    func follow(path: String, generation: OpenCodeGeneration? = nil, movingStreamsBefore: Double? = nil) {
        condition.lock()
        defer { condition.unlock() }
        self.path = path
        self.generation = generation
        if running, let before = movingStreamsBefore, let since = streamSince, since < before, let streamCut {
            moving = true
            streamCut.signal()
        }
        guard !running, !stopped else { return condition.signal() }
        running = true
        let thread = Thread { [self] in run() }
        thread.name = "octunnel-events"
        thread.start()
    }

    /// Ends the thread (at once, where it sleeps) and the notifier's programs (their whole
    /// groups, waited for).
    func stop() {
        condition.changing { stopped = true }
        stopSignal?.signal()
        notifier.stop()
    }

    /// What `stop()` signals: the current stream's cut (a stream starting later sees `stopped`).
    private var stopSignal: StopSignal? {
        condition.lock(); defer { condition.unlock() }
        return streamCut
    }

    private var isStopped: Bool {
        condition.lock(); defer { condition.unlock() }
        return stopped
    }

    private func run() {
        var watch = AgentSessionWatch(secrets: credentials.secrets)
        var waitingSaid = 0
        var pause = 1.0
        while !isStopped {
            condition.lock()
            let path = self.path ?? "/api/event"
            let generation = self.generation ?? OpenCodeGeneration.serving(eventPath: path) ?? .two
            condition.unlock()
            var probe = HTTPProbe(
                host: host, port: port, deadline: .distantFuture, authorization: credentials.authorization,
                secrets: credentials.secrets)
            probe.connected = { [ownStream] in ownStream($0) }
            let deliver: (inout AgentSessionWatch) -> Void = { [notifier, waiting] watch in
                for moment in watch.due(now: MonotonicClock.now()) { notifier.notify(moment) }
                if watch.waitingCount != waitingSaid {
                    waitingSaid = watch.waitingCount
                    waiting(waitingSaid)
                }
            }
            if let cut = streamStarting() {
                probe.idle = HTTPProbe.IdleWork(stop: cut, nextTurn: { watch.nextDue }, turn: { deliver(&watch) })
            }
            do {
                var connected = false
                let result = try probe.events(path, limit: .max) { event in
                    if !connected {
                        connected = true
                        catchUp(&watch, generation: generation)
                        sayOnce(
                            "following",
                            "notifications: following OpenCode's events (\(path)): told here when the agent "
                                + "finishes, asks for permission or fails", warning: false)
                    }
                    if let decoded = generation.api.event(data: event.data) {
                        for moment in watch.feed(decoded, now: MonotonicClock.now()) { notifier.notify(moment) }
                        if let request = AgentSessionWatch.answeredRequest(decoded) {
                            notifier.answered(requestID: request)
                        }
                    }
                    deliver(&watch)
                    if event.data.contains("server.connected") { pause = 1 }
                    return isStopped
                }
                if result.head.status != 200 {
                    sayOnce(
                        "status \(result.head.status)",
                        Self.refusal(status: result.head.status, path: path, credentials: credentials))
                    pause = min(pause * 2, 30)
                }
            } catch {
                // The tunnel's session went, or OpenCode did: asked again below.
            }
            ownStream(nil)
            watch.reconnected()
            condition.lock()
            (streamCut, streamSince) = (nil, nil)
            if !stopped && !moving { _ = condition.wait(until: Date().addingTimeInterval(pause)) }
            moving = false
            condition.unlock()
        }
    }

    /// The coming stream's cut, signalled already if `stop()` came first; its start noted.
    private func streamStarting() -> StopSignal? {
        condition.lock(); defer { condition.unlock() }
        streamCut = try? StopSignal()
        streamSince = MonotonicClock.now()
        if stopped { streamCut?.signal() }
        return streamCut
    }

    /// What the cut hid (issue 48), or what waited before `tunnel up` started: asked of OpenCode's
    /// lists as the stream connects, before the stream's own events, within one deadline
    /// (`CatchUp`); those told before are not told again (`AgentSessionWatch.caughtUp`). Pending
    /// lists that cannot be had are said once: the stream goes on.
    private func catchUp(_ watch: inout AgentSessionWatch, generation: OpenCodeGeneration) {
        var catchUp = CatchUp(host: host, port: port, credentials: credentials)
        if !catchUp.generations.contains(generation) { catchUp.generations.append(generation) }
        let moments = catchUp.moments(&watch) { reason in
            sayOnce(
                "catch-up",
                "notifications: could not ask OpenCode what waits for an answer (\(reason)); only what comes on the "
                    + "stream is told")
        }
        for moment in moments { notifier.notify(moment) }
    }

    private func sayOnce(_ key: String, _ text: String, warning: Bool = true) {
        guard said.insert(key).inserted else { return }
        emit(warning ? .warning(text) : .notice(text))
    }

    /// Why the event stream cannot be followed, and the fix.
    static func refusal(status: Int, path: String, credentials: OpenCodeCredentials) -> String {
        if status == 401 && credentials.password == nil {
            return
                "notifications: OpenCode's event stream \(path) asks for a password (none given here), so octunnel cannot tell "
                + "you when the agent finishes or asks: set OPENCODE_PASSWORD or give --password-file PATH"
        }
        if status == 401 {
            return "notifications: OpenCode refused the password for its event stream \(path) (\(credentials.usedText))"
        }
        return "notifications: OpenCode's event stream \(path) answered HTTP \(status); asked again later"
    }
}
