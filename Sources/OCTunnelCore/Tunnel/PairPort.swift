/// OpenCode 2's `opencode pair` links (`<service url>/auth/connect/<code>`) name the home
/// server's own port: `http://127.0.0.1:49374/auth/connect/…` for the service. On the laptop
/// they open only where something listens on that very port, and the session cookie they set
/// is named and checked by `Host` (the request's `Origin` host must equal it: upstream
/// packages/server/src/middleware/authorization.ts). So `tunnel up` also listens on that port
/// for OpenCode's forward, when it differs from the local one (`--no-pair-port` turns it off).
public enum PairPort {
    /// The port pair links from home name, when `tunnel up` should listen on it too: the one
    /// 2.x's `/api/info` named, else (its 401 without a password here: `/api/info` is not read)
    /// the service's default on the release channels, 49374, since pair links come from the
    /// service; nil for 1.x, or when it is the local port already.
    public static func port(for report: HealthReport, localPort: Int) -> Int? {
        guard report.generation == .two else { return nil }
        let port = report.serverPort ?? OpenCodeServiceFiles.defaultPort(channel: "latest")
        return port == localPort ? nil : port
    }

    /// What `tunnel up` says about it, once: where pair links open, or why they do not.
    static func event(port: Int, localPort: Int, outcome: LocalForward.AlsoListen?, guessed: Bool) -> EngineEvent {
        let link = "http://127.0.0.1:\(port)/auth/connect/…"
        let whose = guessed ? "OpenCode 2's background service port, 49374 (its own port at home is not known without a password)" : "the home server's own port"
        switch outcome {
        case .listening?, .already?:
            return .pairLinks(port: port, text: "pair links from home open here: \(link) (\(whose); --no-pair-port turns this off)")
        case .unavailable(let why)?:
            return .pairLinks(port: port, text: "pair links from home name port \(port) (\(whose)), which is \(why): open them with :\(localPort) in place of :\(port); the browser then keeps a cookie for port \(localPort)")
        case nil:
            return .pairLinks(port: port, text: "pair links from home name port \(port) (\(whose)) and --no-pair-port is set: open them with :\(localPort) in place of :\(port)")
        }
    }
}
