import Foundation

/// Everything the engine of `tunnel up` and `home up` tells its user, as data (UpEvent adds the
/// health test's and the failure that ends a run): the CLI prints it as text or JSON lines.
public enum EngineEvent: Sendable {
    case connecting(target: SSHTarget, attempt: Int)
    case stage(StageReport)
    case connected(target: SSHTarget, info: SessionInfo)
    /// `tunnel up`: a forward's listener is up on `listen` (the port it got), and on
    /// `alsoListening` on the same port (::1 beside 127.0.0.1); its connections go to `target`
    /// as the VPS sees it. The JSON names them `localHost`/`localPort` and `remoteHost`/`remotePort`.
    case forwarding(listen: HostPort, target: HostPort, alsoListening: [HostPort] = [], openCode: Bool = true)
    /// A session ended, or an attempt failed, for `reason`; the next attempt in `retryIn` s.
    case disconnected(reason: SessionEnd, retryIn: Double)
    /// `tunnel up`: nothing listens at a forward's `target` on the VPS.
    case nothingListening(target: HostPort, reverseCommand: String)
    /// `tunnel up`: the VPS refused a channel to a forward's `target`.
    case forwardRefused(target: HostPort, reason: String)
    case clientOpened(id: Int, peer: String)
    case clientClosed(id: Int, sent: Int, received: Int)
    case clientDropped(id: Int, reason: String)
    case stopping(reason: SessionEnd)
    case warning(String)
    /// `home up`: the VPS listens on a forward's `listen` (the port it got) and carries its
    /// connections to `target` at home.
    case listening(listen: HostPort, target: HostPort)
    /// `home up`: the VPS refused to listen without saying why (a busy port); retried.
    /// `holder` is what the key's forced command found holding it (`PortReclaimProgram`).
    case listenRefused(listen: HostPort, retryIn: Double, holder: ListenHolder)
    /// `home up`: the port was held by a dead session of this key's user, which the forced
    /// command ended; the listen is asked again at once.
    case portTakenBack(listen: HostPort, report: PortReclaimReport)
    /// Something worth one line that is neither a warning nor a failure.
    case notice(String)
    /// `tunnel up`: the agent finished, asks for permission, or failed (`AgentSessionWatch`).
    case notification(AgentMoment)
    /// `tunnel up`: where OpenCode 2's pair links from home open on this machine (`PairPort`).
    case pairLinks(port: Int, text: String)
    /// `home up`: where OpenCode's connections go and why (OpenCode 2's service found in its
    /// files, or moved since), or a service file it could not use (`HomeOpenCode`).
    case openCodeHome(home: HostPort, detail: String)
    /// `home up`: a forwarded connection could not reach its forward's `target` on this machine.
    case homeUnreachable(target: HostPort, reason: String, openCode: Bool = true)
    /// A network change, a wake or a reconnect request, and what the session driver did about it.
    case roaming(RoamingEvent)
    /// A stream stopped with bytes waiting and room to take them; the loop moved it again.
    case streamStalled(StreamStall)
}

extension OCTunnelFailure {
    /// Failures that retrying cannot fix: the host key or our key.
    /// A refusal that ends by itself: a server that closes before its greeting, as sshd does
    /// while it penalizes this address (PerSourcePenalties, at most 10 minutes by default).
    /// `tunnel up` and `home up` wait it out even on their first connection.
    var passesByItself: Bool {
        if case .closedBeforeGreeting? = unboxed as? ConnectError { return true }
        return false
    }

    var isFatalOnReconnect: Bool {
        switch exitStatus {
        case .hostKeyChanged, .permission, .dataError, .noInput: return true
        default: return false
        }
    }
}
