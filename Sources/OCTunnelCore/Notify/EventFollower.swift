import Foundation

/// `tunnel up`'s hold on OpenCode's event stream, through the tunnel, for as long as it runs
/// (issue 40): each event goes through `SessionWatch`, each moment to the `Notifier`. The health
/// test starts it after a pass, with the stream that answered; the stream is asked again when
/// it ends (a reconnect of the tunnel, OpenCode restarted), with nothing from before counted
/// twice. An answer that is not a stream (OpenCode 2 without a password here: 401) is said once,
/// with the fix, and asked again less and less often (up to every 30 s).
///
/// Asleep when nothing happens (issue 48): its thread waits for the stream's bytes, for the
/// next "finished" to settle, or for `stop()` (a `StopSignal` it polls beside the socket),
/// never on a tick; OpenCode's heartbeats are its only wake-ups.
final class EventFollower: @unchecked Sendable {
    private let host: String
    private let port: Int
    private let credentials: OpenCodeCredentials
    private let notifier: Notifier
    private let emit: @Sendable (EngineEvent) -> Void
    /// Told how many requests wait for an answer each time that changes (`tunnel status`).
    private let waiting: @Sendable (Int) -> Void
    private let condition = NSCondition()
    private var path: String?
    private var running = false
    private var stopped = false
    private var said = Set<String>()
    /// What `stop()` signals to the thread asleep on the stream (nil if no pipe could be made:
    /// then the stop is seen at the stream's next bytes).
    private let stopSignal = try? StopSignal()

    init(host: String, port: Int, credentials: OpenCodeCredentials, notifier: Notifier, waiting: @escaping @Sendable (Int) -> Void = { _ in },
         emit: @escaping @Sendable (EngineEvent) -> Void) {
        self.waiting = waiting
        self.host = host
        self.port = port
        self.credentials = credentials
        self.notifier = notifier
        self.emit = emit
    }

    /// Follows `path` (the event stream the health test found); starts the thread the first time.
    func follow(path: String) {
        condition.lock()
        defer { condition.unlock() }
        self.path = path
        guard !running, !stopped else { return condition.signal() }
        running = true
        let thread = Thread { [self] in run() }
        thread.name = "octunnel-events"
        thread.start()
    }

    /// Ends the thread (at once, where it sleeps) and the notifier's programs (their whole
    /// groups, waited for).
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
        stopSignal?.signal()
        notifier.stop()
    }

    private var isStopped: Bool {
        condition.lock(); defer { condition.unlock() }
        return stopped
    }

    private func run() {
        var watch = SessionWatch(secrets: credentials.secrets)
        var waitingSaid = 0
        var pause = 1.0
        /// Whether a stream was had before: each one after it is a stream back after a cut.
        var streamed = false
        while !isStopped {
            condition.lock()
            let path = self.path ?? "/api/event"
            condition.unlock()
            var probe = HTTPProbe(host: host, port: port, deadline: .distantFuture, authorization: credentials.authorization, secrets: credentials.secrets)
            let deliver: (inout SessionWatch) -> Void = { [notifier, waiting] watch in
                for moment in watch.due(now: MonotonicClock.now()) { notifier.notify(moment) }
                if watch.waitingCount != waitingSaid {
                    waitingSaid = watch.waitingCount
                    waiting(waitingSaid)
                }
            }
            if let stopSignal {
                probe.idle = HTTPProbe.IdleWork(stop: stopSignal, nextTurn: { watch.nextDue }, turn: { deliver(&watch) })
            }
            do {
                var connected = false
                let result = try probe.events(path, limit: .max) { event in
                    if !connected {
                        connected = true
                        if streamed { catchUp(&watch) }
                        streamed = true
                        sayOnce("following", "notifications: following OpenCode's events (\(path)): told here when the agent finishes, asks for permission or fails", warning: false)
                    }
                    if let decoded = OpenCodeEvent(data: event.data) {
                        for moment in watch.feed(decoded, now: MonotonicClock.now()) { notifier.notify(moment) }
                    }
                    deliver(&watch)
                    if event.data.contains("server.connected") { pause = 1 }
                    return isStopped
                }
                if result.head.status != 200 {
                    sayOnce("status \(result.head.status)", Self.refusal(status: result.head.status, path: path, credentials: credentials))
                    pause = min(pause * 2, 30)
                }
            } catch {
                // The tunnel's session went, or OpenCode did: asked again below.
            }
            watch.reconnected()
            condition.lock()
            if !stopped { _ = condition.wait(until: Date().addingTimeInterval(pause)) }
            condition.unlock()
        }
    }

    /// What the cut hid (issue 48): the permissions and questions OpenCode still waits on, in
    /// its own directory and each the stream named, asked of it as the stream is back, before
    /// the stream's own events; those told before are not told again (`SessionWatch.caughtUp`).
    /// With 1.x, also the sessions seen working that finished meanwhile. A list that cannot be
    /// had is said once (permissions) or quietly skipped (statuses): the stream goes on.
    private func catchUp(_ watch: inout SessionWatch) {
        let client = PermissionClient(host: host, port: port, credentials: credentials, timeout: 5)
        let directories = watch.directories()
        var generation = OpenCodeGeneration.one
        do {
            var (found, pending) = try client.list()
            generation = found
            if !directories.isEmpty { pending.append(try client.list(directories: directories).list) }
            for moment in watch.caughtUp(pending) { notifier.notify(moment) }
        } catch {
            sayOnce("catch-up", "notifications: could not ask OpenCode what it asked while the stream was cut (\(error.localizedDescription)); only what comes on the stream is told")
        }
        guard generation == .one else { return }
        // 1.x: the sessions seen working that no longer work finished meanwhile (GET /session/status
        // per directory; a directory that does not answer judges none of its sessions).
        var working: [String?: Set<String>] = [:]
        for directory in [nil] + directories.map(Optional.some) {
            let probe = HTTPProbe(host: host, port: port, deadline: Date(timeIntervalSinceNow: 5), authorization: credentials.authorization,
                                  secrets: credentials.secrets)
            guard let (head, body) = try? probe.get("/session/status", headers: PermissionClient.directoryHeaders(directory), limit: 1 << 20),
                  head.status == 200, let listed = watch.working(in: body) else { continue }
            working[directory] = listed
        }
        for moment in watch.caughtUp(working: working) { notifier.notify(moment) }
    }

    private func sayOnce(_ key: String, _ text: String, warning: Bool = true) {
        guard said.insert(key).inserted else { return }
        emit(warning ? .warning(text) : .notice(text))
    }

    /// Why the event stream cannot be followed, and the fix.
    static func refusal(status: Int, path: String, credentials: OpenCodeCredentials) -> String {
        if status == 401 && credentials.password == nil {
            return "notifications: OpenCode's event stream \(path) asks for a password (none given here), so octunnel cannot tell you when the agent finishes or asks: set OPENCODE_PASSWORD or give --password-file PATH"
        }
        if status == 401 {
            return "notifications: OpenCode refused the password for its event stream \(path) (\(credentials.usedText))"
        }
        return "notifications: OpenCode's event stream \(path) answered HTTP \(status); asked again later"
    }
}
