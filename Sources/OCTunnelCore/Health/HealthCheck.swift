import Foundation

/// What a passing health test found.
public struct HealthReport: Sendable {
    public let version: String
    public let healthPath: String
    public let eventsPath: String
    public let healthMilliseconds: Int
    public let eventsMilliseconds: Int
}

/// The health test through the local forward: `GET /global/health` (OpenCode 1.x) or
/// `/api/health` (2.x), then the event stream's `server.connected`, each failure said as
/// the layer that broke and what to do.
public struct HealthCheck: Sendable {
    public let localPort: Int
    /// The address the health test connects to: the forward's own (see `address(forBind:)`).
    public var localHost = "127.0.0.1"
    public let remote: HostPort
    public let reverseCommand: String
    public let timeout: Double
    public let username: String
    public let password: String?
    /// Why the VPS refused the forward, if the tunnel saw it do so: a connection closed without
    /// an answer is then that refusal, not "nothing listens".
    public var forwardRefusal: (@Sendable () -> String?)?

    public init(localPort: Int, remote: HostPort, reverseCommand: String, timeout: Double = 5,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.localPort = localPort
        self.remote = remote
        self.reverseCommand = reverseCommand
        self.timeout = timeout
        let user = environment["OPENCODE_SERVER_USERNAME"].flatMap { $0.isEmpty ? nil : $0 }
        self.username = user ?? "opencode"
        self.password = environment["OPENCODE_SERVER_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
    }

    private var authorization: String? {
        password.map { "Basic " + Data("\(username):\($0)".utf8).base64EncodedString() }
    }

    /// The HTTP health answer: version and which API generation answered.
    public func health() throws(OCTunnelError) -> (version: String, path: String, events: String, ms: Int) {
        let started = Date()
        let probe = HTTPProbe(host: localHost, port: localPort, deadline: started.addingTimeInterval(timeout), authorization: authorization)
        var (head, body) = try request(probe, "/global/health")
        var path = "/global/health"
        var events = "/global/event"
        if head.status == 404 {
            (head, body) = try request(probe, "/api/health")
            path = "/api/health"
            events = "/event"
        }
        let ms = Int(Date().timeIntervalSince(started) * 1000)
        switch head.status {
        case 200:
            guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
                  object["healthy"] as? Bool == true, let version = object["version"] as? String else {
                throw .notOpenCode(remoteHost: remote.host, remotePort: remote.port, detail: "HTTP 200 from \(path) with \(Self.preview(body))")
            }
            return (version, path, events, ms)
        case 401:
            throw password == nil ? .healthNeedsPassword : .healthPasswordRefused
        default:
            throw .notOpenCode(remoteHost: remote.host, remotePort: remote.port, detail: "HTTP \(head.status) from \(path): \(Self.preview(body))")
        }
    }

    private func request(_ probe: HTTPProbe, _ path: String) throws(OCTunnelError) -> (HTTPProbe.Head, [UInt8]) {
        do {
            return try probe.get(path)
        } catch {
            throw describe(error, what: "GET \(path)")
        }
    }

    private func describe(_ failure: HTTPProbe.Failure, what: String) -> OCTunnelError {
        switch failure {
        case .cannotConnect(let reason):
            return .healthFailed(summary: "cannot reach the local forward \(HostPort(host: localHost, port: localPort)) (\(reason))", fix: "is `octunnel tunnel up` running?")
        case .closedWithoutAnswer:
            if let reason = forwardRefusal?() {
                return .forwardRefused(remoteHost: remote.host, remotePort: remote.port, reason: reason)
            }
            return .nothingListeningBehindVPS(remoteHost: remote.host, remotePort: remote.port, reverseCommand: reverseCommand)
        case .timedOut:
            return .healthFailed(summary: "\(what) through VPS \(remote) got no answer within \(Int(timeout)) s",
                                 fix: "the home machine may be asleep or OpenCode busy; check `opencode serve` there")
        case .malformed(let detail):
            return .notOpenCode(remoteHost: remote.host, remotePort: remote.port, detail: detail)
        }
    }

    /// Waits for `server.connected` on the event stream ("stream before you send").
    public func events(path: String) throws(OCTunnelError) -> Int {
        let started = Date()
        let probe = HTTPProbe(host: localHost, port: localPort, deadline: started.addingTimeInterval(timeout), authorization: authorization)
        let result: (HTTPProbe.Head, Bool)
        do {
            result = try probe.events(path) { data in
                guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { return false }
                let payload = object["payload"] as? [String: Any]
                return payload?["type"] as? String == "server.connected" || object["type"] as? String == "server.connected"
            }
        } catch {
            throw describe(error, what: "GET \(path)")
        }
        guard result.0.status == 200 else {
            if result.0.status == 401 { throw password == nil ? .healthNeedsPassword : .healthPasswordRefused }
            throw .notOpenCode(remoteHost: remote.host, remotePort: remote.port, detail: "HTTP \(result.0.status) from \(path)")
        }
        guard result.1 else {
            throw .healthFailed(summary: "the event stream \(path) did not send server.connected within \(Int(timeout)) s",
                                fix: "OpenCode answers but its event stream is not ready; clients would miss events. Restart `opencode serve` on the home machine")
        }
        return Int(Date().timeIntervalSince(started) * 1000)
    }

    /// Both steps; the report says the version and how long each took.
    public func run() throws(OCTunnelError) -> HealthReport {
        let health = try health()
        let eventsMs = try events(path: health.events)
        return HealthReport(version: health.version, healthPath: health.path, eventsPath: health.events,
                            healthMilliseconds: health.ms, eventsMilliseconds: eventsMs)
    }

    /// Where to reach a forward listening on `bind`: the wildcard addresses are reached on loopback.
    public static func address(forBind bind: String) -> String {
        switch bind {
        case "0.0.0.0", "": return "127.0.0.1"
        case "::", "[::]": return "::1"
        default: return bind.hasPrefix("[") && bind.hasSuffix("]") ? String(bind.dropFirst().dropLast()) : bind
        }
    }

    static func preview(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(80), as: UTF8.self)
        let clean = String(text.unicodeScalars.map { $0.value >= 0x20 && $0.value < 0x7f ? Character($0) : " " })
        return "\"\(clean.trimmingCharacters(in: .whitespaces))\(body.count > 80 ? "…" : "")\""
    }
}
