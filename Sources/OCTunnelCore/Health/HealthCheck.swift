import Foundation

/// What a passing health test found.
public struct HealthReport: Sendable {
    public let version: String
    public let generation: OpenCodeGeneration
    public let healthPath: String
    public let eventsPath: String
    public let healthMilliseconds: Int
    public let eventsMilliseconds: Int
    /// OpenCode 2 answered 401 and no password was given here: the path to a running OpenCode 2
    /// is proven, its API and event stream are not (`version` is then only "2", `eventsPath` empty).
    public var passwordAsked = false
    /// The home server's own port, as 2.x's `/api/info` names it (nil: not asked, or not said).
    public var serverPort: Int?

    public init(
        version: String, generation: OpenCodeGeneration, healthPath: String, eventsPath: String,
        healthMilliseconds: Int, eventsMilliseconds: Int, passwordAsked: Bool = false, serverPort: Int? = nil
    ) {
        self.version = version
        self.generation = generation
        self.healthPath = healthPath
        self.eventsPath = eventsPath
        self.healthMilliseconds = healthMilliseconds
        self.eventsMilliseconds = eventsMilliseconds
        self.passwordAsked = passwordAsked
        self.serverPort = serverPort
    }

    /// What a health line says when OpenCode 2 asked for a password none was given for.
    public static let passwordAskedText =
        "it asks for a password; none given here: the API and event stream were not checked"
    /// How to have them checked.
    public static let passwordAskedFix = "to check them, set OPENCODE_PASSWORD or give --password-file PATH"
}

/// What the health routes said: the version, the API generation and the route that answered.
public struct HealthAnswer: Sendable {
    public let version: String
    public let generation: OpenCodeGeneration
    public let path: String
    public let ms: Int
    /// OpenCode 2's 401 without a password here (`HealthReport.passwordAsked`).
    public var passwordAsked = false
    /// The server's own port (`HealthReport.serverPort`).
    public var serverPort: Int?
}

/// The health test through the local forward: find which OpenCode answers (the routes of
/// `OpenCodeAnswer.healthRoutes`, in order), then wait for `server.connected` on that
/// generation's event stream. Each failure is said as the layer that broke and what to do.
public struct HealthCheck: Sendable {
    public let localPort: Int
    /// The address the health test connects to: the forward's own (see `address(forBind:)`).
    public var localHost = Defaults.bind
    public let remote: HostPort
    public let reverseCommand: String
    public let timeout: Double
    public let credentials: OpenCodeCredentials
    /// Why the VPS refused the forward, if the tunnel saw it do so: a connection closed without
    /// an answer is then that refusal, not "nothing listens".
    public var forwardRefusal: (@Sendable () -> String?)?
    /// The generations whose health routes are tried (`OpenCodeGeneration.known`).
    public var generations = OpenCodeGeneration.known

    public init(
        localPort: Int, remote: HostPort, reverseCommand: String,
        timeout: Double = Double(Defaults.healthTimeoutSeconds),
        credentials: OpenCodeCredentials = OpenCodeCredentials()
    ) {
        self.localPort = localPort
        self.remote = remote
        self.reverseCommand = reverseCommand
        self.timeout = timeout
        self.credentials = credentials
    }

    private func probe(deadline: Date) -> HTTPProbe {
        HTTPProbe(
            host: localHost, port: localPort, deadline: deadline, authorization: credentials.authorization,
            secrets: credentials.secrets)
    }

    /// Walks the health routes until one names OpenCode's version and generation.
    ///
    /// A route another version lacks (an empty or JSON 404) or a web page moves on to the next.
    /// A 401 is remembered and the walk goes on, because the route that refused does not say
    /// which OpenCode refused (2.x may guard its web app, answering 1.x's `/global/health`, with
    /// an empty 401): the answers together name the generation (`OpenCodeAnswer.refusingGeneration`).
    /// Any other answer is not OpenCode. If no route answered as OpenCode, the first answer is
    /// the one reported. OpenCode 2's own 401 (`{"_tag":"UnauthorizedError",…}`) when no
    /// password was given here is a pass with `passwordAsked`: only OpenCode 2 answers so, so the
    /// tunnel, the VPS, the home forward and a running OpenCode 2 are proven (a user signed in by
    /// `opencode pair` link has no password on the laptop). A password given and refused stays a failure.
    public func health() throws -> HealthAnswer {
        let started = Date()
        let probe = probe(deadline: started.addingTimeInterval(timeout))
        var firstMiss: String?
        var refusals: [(path: String, answer: OpenCodeAnswer)] = []
        walk: for route in OpenCodeAnswer.healthRoutes(of: generations) {
            let head: HTTPProbe.Head
            let body: [UInt8]
            do {
                (head, body) = try probe.get(route.path)
            } catch .closedWithoutAnswer where firstMiss != nil || !refusals.isEmpty {
                // Something answered an earlier route, so the forward works: this route is just unanswered.
                continue
            } catch {
                throw describe(error, what: "GET \(route.path)")
            }
            let answer = OpenCodeAnswer.classify(
                path: route.path, status: head.status, contentType: head.headers["content-type"],
                body: body, secrets: credentials.secrets, generations: generations)
            switch answer {
            case .openCode(let version, let generation):
                return HealthAnswer(
                    version: credentials.shown(version, limit: 80), generation: generation, path: route.path,
                    ms: Int(Date().timeIntervalSince(started) * 1000),
                    serverPort: generation.api.serverPort(health: route.path, body: body))
            case .needsPassword:
                refusals.append((route.path, answer))
            case .foreign(let detail):
                if !refusals.isEmpty { break walk }
                throw notOpenCode(detail)
            case .homeGateway(let answer):
                throw gatewayError(answer)
            case .routeMissing, .webPage:
                if firstMiss == nil {
                    firstMiss =
                        "HTTP \(head.status) from "
                        + "\(route.path)\(body.isEmpty ? "" : ": \(OpenCodeAnswer.preview(body, secrets: credentials.secrets))")"
                }
            }
            // A refusal that names its generation says what it is: no need to ask the other routes.
            if let named = OpenCodeAnswer.refusingGeneration(refusals, generations: generations),
                !named.api.ownsUnnamedRefusals
            {
                break walk
            }
        }
        if !refusals.isEmpty {
            let generation = OpenCodeAnswer.refusingGeneration(refusals, generations: generations)
            if let generation, generation.api.refusalProvesServer, credentials.password == nil,
                let refused = refusals.first(where: { $0.answer == .needsPassword(generation: generation) })
            {
                return HealthAnswer(
                    version: String(generation.rawValue), generation: generation, path: refused.path,
                    ms: Int(Date().timeIntervalSince(started) * 1000), passwordAsked: true)
            }
            throw passwordError(generation)
        }
        let routes = OpenCodeAnswer.healthRoutes(of: generations).map(\.path).joined(separator: ", ")
        throw notOpenCode((firstMiss ?? "no answer") + "; none of \(routes) answered as OpenCode")
    }

    private func passwordError(_ generation: OpenCodeGeneration?) -> HealthError {
        credentials.password == nil
            ? HealthError.healthNeedsPassword(generation: generation)
            : HealthError.healthPasswordRefused(
                generation: generation, username: credentials.username, source: credentials.sourceText)
    }

    private func notOpenCode(_ detail: String) -> HealthError {
        .notOpenCode(remoteHost: remote.host, remotePort: remote.port, detail: credentials.shown(detail))
    }

    /// `home up`'s 502, its words shown as text from outside (whatever answers may forge one).
    private func gatewayError(_ answer: HomeGatewayAnswer) -> ForwardError {
        .openCodeNotRunningAtHome(
            home: answer.home, detail: credentials.shown(answer.error), fix: credentials.shown(answer.fix))
    }

    private func describe(_ failure: HTTPProbe.Failure, what: String) -> any OCTunnelFailure {
        switch failure {
        case .cannotConnect(let reason):
            return HealthError.healthFailed(
                summary: "cannot reach the local forward \(HostPort(host: localHost, port: localPort)) "
                    + "(\(reason))", fix: "is `octunnel tunnel up` running?")
        case .closedWithoutAnswer:
            if let reason = forwardRefusal?() {
                return ForwardError.forwardRefused(remoteHost: remote.host, remotePort: remote.port, reason: reason)
            }
            return ForwardError.nothingListeningBehindVPS(
                remoteHost: remote.host, remotePort: remote.port, reverseCommand: reverseCommand)
        case .silent:
            // Not one byte: sshd accepted for a forward whose home end is gone (a dead session's).
            return ForwardError.staleForward(remoteHost: remote.host, remotePort: remote.port, seconds: Int(timeout))
        case .timedOut:
            return HealthError.healthFailed(
                summary: "\(what) through VPS \(remote) got no answer within \(Int(timeout)) s",
                fix: "the home machine may be asleep or OpenCode busy; check `opencode serve` there")
        case .malformed(let detail):
            return notOpenCode(detail)
        }
    }

    /// Waits for `server.connected` on the event stream of `generation` ("stream before you
    /// send"), trying its streams in order while they are missing (404). Returns the stream
    /// that answered and how long it took.
    public func events(generation: OpenCodeGeneration) throws -> (path: String, ms: Int) {
        let started = Date()
        let probe = probe(deadline: started.addingTimeInterval(timeout))
        var missing: [String] = []
        for path in generation.eventPaths {
            let result: HTTPProbe.EventsResult
            do {
                result = try probe.events(path) { generation.api.event(data: $0.data)?.type == "server.connected" }
            } catch {
                throw describe(error, what: "GET \(path)")
            }
            switch result.head.status {
            case 200:
                guard result.found else {
                    throw HealthError.healthFailed(
                        summary: "the event stream \(path) did not send server.connected within \(Int(timeout)) s",
                        fix: "OpenCode answers but its event stream is not ready; clients would miss events. Restart "
                            + "`opencode serve` on the home machine")
                }
                return (path, Int(Date().timeIntervalSince(started) * 1000))
            case 401:
                throw passwordError(generation)
            default:
                let type = result.head.headers["content-type"]
                let answer = OpenCodeAnswer.classify(
                    path: path, status: result.head.status, contentType: type, body: result.body,
                    secrets: credentials.secrets, generations: generations)
                if case .routeMissing = answer {
                    missing.append(path)
                    continue
                }
                if case .homeGateway(let gateway) = answer {
                    throw gatewayError(gateway)
                }
                throw notOpenCode(
                    "HTTP \(result.head.status) from "
                        + "\(path)\(result.body.isEmpty ? "" : ": \(OpenCodeAnswer.preview(result.body, secrets: credentials.secrets))")"
                )
            }
        }
        let missed = missing.joined(separator: " and ")
        throw HealthError.healthFailed(
            summary: "OpenCode (\(generation.label)) has no event stream: \(missed) answered 404",
            fix: "clients need it to follow sessions; update OpenCode on the home machine")
    }

    /// Both steps; the report says the version, the generation and how long each took. When
    /// OpenCode 2 asked for a password none was given for, the event stream is not asked for (it
    /// would answer 401 too).
    public func run() throws -> HealthReport {
        let health = try health()
        if health.passwordAsked {
            return HealthReport(
                version: health.version, generation: health.generation, healthPath: health.path, eventsPath: "",
                healthMilliseconds: health.ms, eventsMilliseconds: 0, passwordAsked: true)
        }
        let events = try events(generation: health.generation)
        return HealthReport(
            version: health.version, generation: health.generation, healthPath: health.path, eventsPath: events.path,
            healthMilliseconds: health.ms, eventsMilliseconds: events.ms, serverPort: health.serverPort)
    }

    /// Where to reach a forward listening on `bind`: the wildcard addresses are reached on loopback.
    public static func address(forBind bind: String) -> String {
        switch bind {
        case "0.0.0.0", "": return "127.0.0.1"
        case "::", "[::]": return "::1"
        default: return bind.hasPrefix("[") && bind.hasSuffix("]") ? String(bind.dropFirst().dropLast()) : bind
        }
    }
}
