import Foundation

/// One line of `tunnel check`: a layer, whether it passed, how long it took, and what it found.
public struct CheckStage: Sendable {
    public let name: String
    public let ok: Bool
    public let milliseconds: Int
    public let detail: String
}

/// The verdict of `tunnel check`: every stage walked, and the failure that stopped it.
public struct CheckResult: Sendable {
    public var stages: [CheckStage] = []
    public var failure: OCTunnelError?
    public var exitStatus: ExitStatus { failure?.exitStatus ?? .ok }
}

/// Walks the layers in order (resolve, TCP, SSH handshake, host key, authentication, forward,
/// HTTP health, SSE readiness) on a private forward from a free local port, stopping at the
/// first failure.
public struct TunnelCheck: Sendable {
    public let options: TunnelOptions
    public let healthTimeout: Double
    public let credentials: OpenCodeCredentials

    public init(options: TunnelOptions, healthTimeout: Double = Double(Defaults.healthTimeoutSeconds), credentials: OpenCodeCredentials = OpenCodeCredentials()) {
        var options = options
        options.localPort = 0
        options.bind = Defaults.bind
        options.exitOnFirstFailure = true
        options.waitsOutPenalty = false
        self.options = options
        self.healthTimeout = healthTimeout
        self.credentials = credentials
    }

    public func run(onStage: @escaping @Sendable (CheckStage) -> Void) -> CheckResult {
        let collector = StageCollector(onStage: onStage)
        let engine: TunnelEngine
        do {
            engine = try TunnelEngine(options: options) { event in
                if case .stage(let report) = event {
                    collector.add(CheckStage(name: report.stage.rawValue, ok: true, milliseconds: report.milliseconds, detail: report.detail))
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
            } catch let error as OCTunnelError {
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
            let error = collector.engineError ?? .sshFailure(host: options.connection.target.host, port: options.connection.target.port, detail: "stopped")
            let done = Set(collector.result.stages.map(\.name))
            let failedStage = ConnectStage.allCases.first { !done.contains($0.rawValue) }?.rawValue ?? error.layer
            return collector.fail(failedStage, error)
        }
        var check = HealthCheck(localPort: engine.localPort, remote: options.remote, reverseCommand: options.reverseCommand,
                                timeout: healthTimeout, credentials: credentials)
        check.forwardRefusal = { engine.lastForwardRefusal }
        let started = Date()
        let health: HealthAnswer
        do {
            health = try check.health()
        } catch {
            if error.layer == "forward" { return collector.fail("forward", error) }
            collector.add(CheckStage(name: "forward", ok: true, milliseconds: 0, detail: "VPS \(options.remote) accepts connections"))
            return collector.fail(error.layer == "home" ? "home" : "health", error)
        }
        let total = Int(Date().timeIntervalSince(started) * 1000)
        collector.add(CheckStage(name: "forward", ok: true, milliseconds: 0, detail: "VPS \(options.remote) accepts connections"))
        collector.add(CheckStage(name: "health", ok: true, milliseconds: total,
                                 detail: "OpenCode \(health.version) (\(health.generation.label)) healthy through \(options.connection.target.host) (\(health.path)), \(credentials.usedText)"))
        do {
            let events = try check.events(generation: health.generation)
            collector.add(CheckStage(name: "events", ok: true, milliseconds: events.ms, detail: "\(events.path) sent server.connected"))
        } catch {
            return collector.fail("events", error)
        }
        return collector.result
    }
}

/// Collects stages from the engine's thread and the checking thread.
private final class StageCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private let onStage: @Sendable (CheckStage) -> Void
    private(set) var result = CheckResult()
    private var isForwarding = false
    private var engineDone = false
    private(set) var engineError: OCTunnelError?
    private var started = Date()

    init(onStage: @escaping @Sendable (CheckStage) -> Void) { self.onStage = onStage }

    func add(_ stage: CheckStage) {
        condition.lock()
        result.stages.append(stage)
        condition.unlock()
        onStage(stage)
    }

    func fail(_ name: String, _ error: OCTunnelError) -> CheckResult {
        add(CheckStage(name: name, ok: false, milliseconds: Int(Date().timeIntervalSince(started) * 1000), detail: error.localizedDescription))
        condition.lock()
        defer { condition.unlock() }
        result.failure = error
        return result
    }

    func forwarding() {
        condition.lock()
        isForwarding = true
        condition.broadcast()
        condition.unlock()
    }

    func engineFinished(_ error: OCTunnelError?) {
        condition.lock()
        engineError = error
        engineDone = true
        condition.broadcast()
        condition.unlock()
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
