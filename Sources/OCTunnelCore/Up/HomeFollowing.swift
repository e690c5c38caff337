import Foundation

/// `home up` follows OpenCode itself (issue 54): at `--home-host:--home-port`, with the password
/// the home already knows, once its health test passes. When OpenCode is not there yet (or
/// refuses), the test is asked again, quietly, every `pause` s growing to `Limits.longest`, until
/// it passes or the run stops; the follower then catches up on what waits (`EventFollower`).
final class HomeFollowing: @unchecked Sendable {
    enum Limits {
        /// Seconds before the first quiet retry of the health test, and the longest between two.
        static let first = 2.0
        static let longest = 30.0
    }

    private let wiring: UpWiring
    private let home: HostPort
    private let timeout: Double
    private let condition = NSCondition()
    private var stopped = false

    init(wiring: UpWiring, home: HostPort, timeout: Double) {
        (self.wiring, self.home, self.timeout) = (wiring, home, timeout)
    }

    /// Follows now when `passed` is the start's passing report, else once a quiet retry passes.
    func start(passed: HealthReport?, engine: Engine) {
        if let passed {
            wiring.openCodeAnswered(passed, host: home.host, port: home.port, engine: engine)
            return
        }
        let thread = Thread { [self] in retry(engine: engine) }
        thread.name = "octunnel-home-follow"
        thread.start()
    }

    /// Ends the retries and the following.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        wiring.stop()
    }

    private func retry(engine: Engine) {
        var pause = Limits.first
        while true {
            condition.lock()
            if !stopped { _ = condition.wait(until: Date().addingTimeInterval(pause)) }
            let done = stopped
            condition.unlock()
            if done { return }
            var check = HealthCheck(
                localPort: home.port, remote: home, reverseCommand: "", timeout: timeout,
                credentials: wiring.credentials)
            check.localHost = home.host
            // A 2.x that asks for a password none was given for passes too: the follower then says
            // the fix once, as `tunnel up`'s does.
            if let report = try? check.run() {
                let what = "\(report.generation.label) \(report.version)"
                engine.emit(.notice("home: OpenCode answers at \(home) now (\(what)): following its events"))
                wiring.openCodeAnswered(report, host: home.host, port: home.port, engine: engine)
                return
            }
            pause = min(pause * 2, Limits.longest)
        }
    }
}
