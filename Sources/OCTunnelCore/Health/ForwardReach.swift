import Foundation

/// What a forward other than OpenCode's answers through the tunnel (`tunnel check`), told apart
/// as the cases a user fixes differently: nothing listens on the VPS port (the home side does
/// not forward it), the VPS refuses the forward (the key line), the home side is reached but
/// nothing listens at home on that port (`home up`'s 502), or something answers.
public enum ForwardReach: Sendable, Equatable {
    /// Something answered: an HTTP status, bytes that are not HTTP, or a connection held open.
    case answered(String)
    /// The connection closed without a byte: nothing listens on the VPS port.
    case nothingBehindVPS
    /// The VPS refused the forward, for this reason (its sshd's words).
    case refused(String)
    /// `home up` answered: the home machine is reached, nothing listens there on that port.
    case nothingAtHome(HomeGatewayAnswer)
    /// The check's own local forward could not be reached (this machine's side).
    case localForwardFailed(String)

    /// Asks once through the forward listening on `localPort`: an HTTP GET of `/` (a dev server's
    /// page; anything else that answers counts as answered too). `refusal` says why the VPS
    /// refused this forward, if it did.
    static func probe(localPort: Int, timeout: Double, refusal: () -> String?) -> ForwardReach {
        let probe = HTTPProbe(host: Defaults.bind, port: localPort, deadline: Date().addingTimeInterval(timeout))
        let answer: (HTTPProbe.Head, [UInt8])
        do {
            answer = try probe.get("/", accept: "*/*", limit: 4096)
        } catch {
            switch error {
            case .closedWithoutAnswer: return refusal().map { .refused($0) } ?? .nothingBehindVPS
            case .malformed: return .answered("an answer that is not HTTP")
            case .silent, .timedOut: return .answered("a connection held open, no answer within \(Int(timeout)) s")
            case .cannotConnect(let reason): return .localForwardFailed(reason)
            }
        }
        let (head, body) = answer
        if let gateway = HomeGatewayAnswer.parse(status: head.status, body: body) { return .nothingAtHome(gateway) }
        return .answered("HTTP \(head.status)")
    }
}
