/// OpenCode 2's `opencode pair` links (`<service url>/auth/connect/<code>`) name the home
/// server's own port: `http://127.0.0.1:49374/auth/connect/…` for the service. On the laptop
/// they open only where something listens on that very port, and the session cookie they set
/// is named and checked by `Host` (the request's `Origin` host must equal it: upstream
/// packages/server/src/middleware/authorization.ts). So `tunnel up` also listens on that port
/// for OpenCode's forward, when it differs from the local one (`--no-pair-port` turns it off).
public enum PairPort {
    /// The ports `tunnel up` listens on by itself for pair links: OpenCode 2's own service ports
    /// (the release channels' 49374, the `local` channel's 49375) and `opencode serve`'s 4096.
    /// Whatever else `/api/info` names is the far side's word, not a choice: named, not taken
    /// (`--pair-port N` takes it).
    public static let openCodePorts = [
        OpenCodeServiceFiles.defaultPort(channel: "latest"), OpenCodeServiceFiles.defaultPort(channel: "local"),
        Defaults.homePort,
    ]

    /// The lowest port `--pair-port` takes: below 1024 are the system's services.
    public static let lowest = 1024

    /// What `tunnel up` does about pair links: where it listens for them, or why not.
    public enum Plan: Equatable, Sendable {
        /// Listen on `port` too.
        case listen(port: Int)
        /// Links name `port`, which is not OpenCode's own: not listened on (`--pair-port N` would).
        case notOpenCodes(port: Int)
        /// Links name `port` and the user turned it off (`--no-pair-port`).
        case off(port: Int)
    }

    /// The port pair links from home name, when `tunnel up` should do something about it: the
    /// one 2.x's `/api/info` named, else (its 401 without a password here: `/api/info` is not
    /// read) the service's default on the release channels, 49374, since pair links come from the
    /// service; the user's `--pair-port N` whatever the far side says. Nil for a generation without pair
    /// links (1.x), or when it is the local port already.
    public static func plan(for report: HealthReport, localPort: Int, choice: PairPortChoice) -> Plan? {
        guard report.generation.api.hasPairLinks else { return nil }
        let named = report.serverPort ?? OpenCodeServiceFiles.defaultPort(channel: "latest")
        switch choice {
        case .port(let port):
            return port == localPort ? nil : .listen(port: port)
        case .off:
            return named == localPort ? nil : .off(port: named)
        case .automatic:
            guard named != localPort else { return nil }
            return openCodePorts.contains(named) ? .listen(port: named) : .notOpenCodes(port: named)
        }
    }

    /// The port pair links name, when `tunnel up` listens there by itself (`plan`'s `.listen`).
    public static func port(for report: HealthReport, localPort: Int) -> Int? {
        if case .listen(let port)? = plan(for: report, localPort: localPort, choice: .automatic) { return port }
        return nil
    }

    /// What `tunnel up` says when `/api/info` names a port that is not OpenCode's own.
    static func notOpenCodesEvent(port: Int, localPort: Int) -> EngineEvent {
        let ports = openCodePorts.map(String.init).joined(separator: ", ")
        return .pairLinks(
            port: port,
            text: "pair links from home name port \(port), which is not one of OpenCode 2's own service "
                + "ports (\(ports)): not listened on (the far side's word chooses no port here); open them with :\(localPort) in place "
                + "of :\(port), or give --pair-port \(port)")
    }

    /// What `tunnel up` says about it, once: where pair links open, or why they do not.
    static func event(
        port: Int, localPort: Int, outcome: LocalForward.AlsoListen?, guessed: Bool, given: Bool = false
    ) -> EngineEvent {
        let link = "http://127.0.0.1:\(port)/auth/connect/…"
        let whose =
            given
            ? "the port you gave with --pair-port"
            : guessed
                ? "OpenCode 2's background service port, 49374 (its own port at home is not known without a password)"
                : "the home server's own port"
        switch outcome {
        case .listening?, .already?:
            return .pairLinks(
                port: port, text: "pair links from home open here: \(link) (\(whose); --no-pair-port turns this off)")
        case .unavailable(let why)?:
            return .pairLinks(
                port: port,
                text: "pair links from home name port \(port) (\(whose)), which is \(why): open them with "
                    + ":\(localPort) in place of :\(port); the browser then keeps a cookie for port \(localPort)")
        case nil:
            return .pairLinks(
                port: port,
                text: "pair links from home name port \(port) (\(whose)) and --no-pair-port is set: open "
                    + "them with :\(localPort) in place of :\(port)")
        }
    }
}

/// `tunnel up --pair-port auto|N` / `--no-pair-port`, and what `--save` keeps: saved as absent
/// (automatic), `false` (off, as files of earlier versions say) or the port number.
public enum PairPortChoice: Equatable, Sendable, Codable {
    /// Listen on the port pair links name when it is one of OpenCode's own (`PairPort.openCodePorts`).
    case automatic
    /// Never (`--no-pair-port`).
    case off
    /// This port, whatever `/api/info` says (`--pair-port N`, 1024-65535).
    case port(Int)

    /// Parses `auto` or a port of 1024-65535; the error is one sentence.
    public static func parse(_ text: String) throws(TargetParseError) -> PairPortChoice {
        if text == "auto" { return .automatic }
        let port: Int
        do {
            port = try HostPort.parsePort(text)
        } catch {
            throw TargetParseError("--pair-port \"\(OutsideText.shown(text, limit: 20))\" is not auto or a port")
        }
        guard port >= PairPort.lowest else {
            throw TargetParseError(
                "--pair-port \(port) is below \(PairPort.lowest): give a port of \(PairPort.lowest)-65535")
        }
        return .port(port)
    }

    public init(from decoder: Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let on = try? value.decode(Bool.self) {
            self = on ? .automatic : .off
        } else {
            let port = try value.decode(Int.self)
            guard (PairPort.lowest...65535).contains(port) else {
                throw DecodingError.dataCorruptedError(
                    in: value, debugDescription: "pairPort \(port) is not \(PairPort.lowest)-65535")
            }
            self = .port(port)
        }
    }

    public func encode(to encoder: Encoder) throws {
        var value = encoder.singleValueContainer()
        switch self {
        case .automatic: try value.encode(true)
        case .off: try value.encode(false)
        case .port(let port): try value.encode(port)
        }
    }
}
