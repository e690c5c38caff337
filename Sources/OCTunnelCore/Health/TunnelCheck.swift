import Foundation

/// One line of `tunnel check`: a layer, whether it passed, how long it took, and what it found.
public struct CheckStage: Sendable {
    public let name: String
    public let ok: Bool
    public let milliseconds: Int
    public let detail: String
    /// Not walked, and not a failure: what `detail` says could not be checked (OpenCode 2's API
    /// and event stream without a password).
    public var skipped = false
}

/// The verdict of `tunnel check`: every stage walked, and the failure that stopped it.
public struct CheckResult: Sendable {
    public var stages: [CheckStage] = []
    public var failure: (any OCTunnelFailure)?
    public var exitStatus: ExitStatus { failure?.exitStatus ?? .ok }
}

/// Walks the layers in order (resolve, TCP, SSH handshake, host key, authentication, forward,
/// HTTP health, SSE readiness) on a private forward from a free local port, stopping at the
/// first failure; then, once the session is up, each forward beside OpenCode's on its own
/// (`ForwardReach`), whatever OpenCode's said: one forward's failure hides no other's.
public struct TunnelCheck: Sendable {
    public let options: TunnelOptions
    public let healthTimeout: Double
    public let credentials: OpenCodeCredentials

    public init(
        options: TunnelOptions, healthTimeout: Double = Double(Defaults.healthTimeoutSeconds),
        credentials: OpenCodeCredentials = OpenCodeCredentials()
    ) {
        var options = options
        options.exitOnFirstFailure = true
        options.waitsOutPenalty = false
        // Every forward on a private port (0: a free one each).
        options.forwards = options.forwards.map {
            Forward(
                direction: .local, listen: HostPort(host: Defaults.bind, port: 0), target: $0.target,
                isOpenCode: $0.isOpenCode)
        }
        self.options = options
        self.healthTimeout = healthTimeout
        self.credentials = credentials
    }

    public func run(onStage: @escaping @Sendable (CheckStage) -> Void) -> CheckResult {
        let collector = StageCollector(onStage: onStage)
        let engine: Engine
        do {
            engine = try Engine(tunnel: options) { event in
                if case .stage(let report) = event {
                    collector.add(
                        CheckStage(
                            name: report.stage.rawValue, ok: true, milliseconds: report.milliseconds,
                            detail: report.detail))
                } else if case .forwarding = event {
                    collector.forwarding()
                }
            }
        } catch {
            return collector.fail("local port", error)
        }
        let runner = Thread {
            do {
                try engine.run()
                collector.engineFinished(nil)
            } catch let error as any OCTunnelFailure {
                collector.engineFinished(error)
            } catch {
                collector.engineFinished(nil)
            }
        }
        runner.start()
        defer {
            engine.stop()
            collector.waitForEngine()
        }
        guard collector.waitForForwardingOrFailure() else {
            let error =
                collector.engineError
                ?? ConnectError.sshFailure(
                    host: options.connection.target.host, port: options.connection.target.port, detail: "stopped")
            let done = Set(collector.result.stages.map(\.name))
            let failedStage = ConnectStage.allCases.first { !done.contains($0.rawValue) }?.rawValue ?? error.layer
            return collector.fail(failedStage, error)
        }
        var result = checkOpenCode(engine, collector)
        if let failure = checkOthers(engine, collector), result.failure == nil {
            result.failure = failure
        }
        return result
    }

    /// OpenCode's forward: the forward, the health routes, the event stream.
    private func checkOpenCode(_ engine: Engine, _ collector: StageCollector) -> CheckResult {
        var check = HealthCheck(
            localPort: engine.listenPorts[0], remote: options.openCode.target,
            reverseCommand: options.reverseCommand(for: options.openCode),
            timeout: healthTimeout, credentials: credentials)
        check.forwardRefusal = { engine.lastForwardRefusal(0) }
        let started = Date()
        let health: HealthAnswer
        do {
            health = try check.health()
        } catch {
            let error = asFailure(error)
            if error.layer == "forward" { return collector.fail("forward", error) }
            collector.add(
                CheckStage(
                    name: "forward", ok: true, milliseconds: 0,
                    detail: "VPS \(options.openCode.target) accepts connections"))
            return collector.fail(error.layer == "home" ? "home" : "health", error)
        }
        let total = Int(Date().timeIntervalSince(started) * 1000)
        collector.add(
            CheckStage(
                name: "forward", ok: true, milliseconds: 0, detail: "VPS \(options.openCode.target) accepts connections"
            ))
        if health.passwordAsked {
            collector.add(
                CheckStage(
                    name: "health", ok: true, milliseconds: total,
                    detail:
                        "OpenCode 2 reached through \(options.connection.target.host) (\(health.path)): \(HealthReport.passwordAskedText)"
                ))
            collector.add(
                CheckStage(
                    name: "events", ok: true, milliseconds: 0, detail: "not checked: \(HealthReport.passwordAskedFix)",
                    skipped: true))
            return collector.result
        }
        collector.add(
            CheckStage(
                name: "health", ok: true, milliseconds: total,
                detail: "OpenCode \(health.version) (\(health.generation.label)) healthy "
                    + "through \(options.connection.target.host) (\(health.path)), \(credentials.usedText)"))
        do {
            let events = try check.events(generation: health.generation)
            collector.add(
                CheckStage(
                    name: "events", ok: true, milliseconds: events.ms, detail: "\(events.path) sent server.connected"))
        } catch {
            return collector.fail("events", error)
        }
        return collector.result
    }

    /// Each forward beside OpenCode's, a stage each (`forward :18081`); the first failure.
    private func checkOthers(_ engine: Engine, _ collector: StageCollector) -> (any OCTunnelFailure)? {
        var first: (any OCTunnelFailure)?
        for (index, forward) in options.forwards.enumerated() where !forward.isOpenCode {
            let name = "forward \(forward.target)"
            let started = Date()
            let reach = ForwardReach.probe(localPort: engine.listenPorts[index], timeout: healthTimeout) {
                engine.lastForwardRefusal(index)
            }
            let ms = Int(Date().timeIntervalSince(started) * 1000)
            let error: any OCTunnelFailure
            switch reach {
            case .answered(let what):
                collector.add(
                    CheckStage(
                        name: name, ok: true, milliseconds: ms, detail: "VPS \(forward.target) answered: \(what)"))
                continue
            case .nothingBehindVPS:
                error = ForwardError.nothingListeningBehindVPS(
                    remoteHost: forward.target.host, remotePort: forward.target.port,
                    reverseCommand: options.reverseCommand(for: forward))
            case .refused(let reason):
                error = ForwardError.forwardRefused(
                    remoteHost: forward.target.host, remotePort: forward.target.port, reason: reason)
            case .localForwardFailed(let reason):
                error = HealthError.healthFailed(
                    summary: "cannot reach the check's own forward to VPS \(forward.target) (\(reason))",
                    fix: "run the check again")
            case .nothingAtHome(let answer):
                error = ForwardError.nothingListeningAtHome(
                    remote: forward.target, home: answer.home, detail: OutsideText.shown(answer.error))
            }
            collector.addFailure(
                CheckStage(name: name, ok: false, milliseconds: ms, detail: error.localizedDescription))
            if first == nil { first = error }
        }
        return first
    }
}

/// Collects stages from the engine's thread and the checking thread.
private final class StageCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private let onStage: @Sendable (CheckStage) -> Void
    private(set) var result = CheckResult()
    private var isForwarding = false
    private var engineDone = false
    private(set) var engineError: (any OCTunnelFailure)?
    private var started = Date()

    init(onStage: @escaping @Sendable (CheckStage) -> Void) { self.onStage = onStage }

    func add(_ stage: CheckStage) {
        condition.lock()
        result.stages.append(stage)
        condition.unlock()
        onStage(stage)
    }

    /// A failed stage that does not end the walk (another forward's).
    func addFailure(_ stage: CheckStage) { add(stage) }

    func fail(_ name: String, _ thrown: any Error) -> CheckResult {
        let error = asFailure(thrown)
        add(
            CheckStage(
                name: name, ok: false, milliseconds: Int(Date().timeIntervalSince(started) * 1000),
                detail: error.localizedDescription))
        condition.lock()
        defer { condition.unlock() }
        result.failure = error
        return result
    }

    func forwarding() {
        condition.changing { isForwarding = true }
    }

    func engineFinished(_ error: (any OCTunnelFailure)?) {
        condition.changing { (engineError, engineDone) = (error, true) }
    }

    func waitForForwardingOrFailure() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !isForwarding && !engineDone { condition.wait() }
        started = Date()
        return isForwarding
    }

    func waitForEngine() {
        condition.lock()
        defer { condition.unlock() }
        _ = engineDone || condition.wait(until: Date().addingTimeInterval(3))
    }
}
