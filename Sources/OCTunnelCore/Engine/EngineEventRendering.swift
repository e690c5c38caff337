import Foundation

extension EngineEvent {
    /// Whether the line is shown only with --verbose.
    public var isVerbose: Bool {
        switch self {
        case .clientOpened, .clientClosed, .clientDropped: return true
        default: return false
        }
    }

    /// One human line for stderr.
    public var text: String {
        switch self {
        case .connecting(let target, let attempt):
            return attempt == 1 ? "connecting to \(target)…" : "connecting to \(target) (attempt \(attempt))…"
        case .stage(let report):
            switch report.stage {
            case .hostKey: return "host key \(report.detail)"
            case .authentication: return "authenticated as \(report.detail)"
            default: return "\(report.stage.rawValue) ✓ \(report.detail) (\(report.milliseconds) ms)"
            }
        case .connected(let target, let info):
            return "connected to \(target.hostPort) (\(info.cipher), \(info.mac))"
        case .forwarding(let listen, let target, let alsoListening, _):
            return
                "forwarding \(([listen] + alsoListening).map(\.description).joined(separator: " and ")) → VPS \(target)"
        case .disconnected(let reason, let retryIn):
            return "disconnected: \(reason.text); retrying in \(String(format: "%.1f", retryIn)) s"
        case .nothingListening(let target, let command):
            return "nothing listens on VPS \(target): the home machine's "
                + "reverse tunnel is probably down. On the home machine run:\n  \(command)"
        case .forwardRefused(let target, let reason):
            return
                "the VPS refused to forward to \(target) (\(reason)): check AllowTcpForwarding and the key's permitopen on the VPS"
        case .clientOpened(let id, let peer):
            return "connection \(id) from \(peer)"
        case .clientClosed(let id, let sent, let received):
            return "connection \(id) closed (\(sent) bytes sent, \(received) received)"
        case .clientDropped(let id, let reason):
            return "connection \(id) closed: \(reason)"
        case .stopping(let reason):
            return "stopping: \(reason.text)"
        case .warning(let text):
            return "warning: \(text)"
        case .openCodeHome(_, let detail):
            return "home: \(detail)"
        case .pairLinks(_, let text):
            return text
        case .notification(let moment):
            return moment.line
        case .notice(let text):
            return text
        case .listening(let listen, let target):
            return "VPS \(listen) → home \(target)"
        case .listenRefused(let listen, let retryIn, let holder):
            return
                "the VPS refused to listen on \(listen): \(holder.text); retrying in \(String(format: "%.1f", retryIn)) s"
                + holder.appendix
        case .portTakenBack(let listen, let report):
            return "VPS \(listen) taken back: \(report.summary); listening again"
        case .homeUnreachable(let home, let reason, let openCode):
            let answer = HomeGatewayAnswer.unreachable(home: home, reason: reason, openCode: openCode)
            guard openCode else {
                return
                    "the app forwarded to \(home) is not running on this machine: \(answer.error) (\(reason)); \(answer.fix)"
            }
            return
                "OpenCode is not running on this machine: \(answer.error) (\(reason)); start `opencode serve --port \(home.port)` here"
        case .roaming(let event):
            return event.text
        case .streamStalled(let stall):
            return "warning: " + stall.text
        }
    }

    /// The event as a JSON object, with `status` in the client app's terms
    /// (disconnected, connecting, connected, error).
    public var jsonObject: [String: Any] {
        switch self {
        case .connecting(let target, let attempt):
            return [
                "event": "connecting", "status": "connecting", "host": target.host, "port": target.port,
                "user": target.user, "attempt": attempt,
            ]
        case .stage(let report):
            return [
                "event": "stage", "status": "connecting", "stage": report.stage.rawValue, "ms": report.milliseconds,
                "detail": report.detail,
            ]
        case .connected(let target, let info):
            return [
                "event": "connected", "status": "connected", "host": target.host, "port": target.port,
                "user": target.user,
                "hostKey": info.hostKey.fingerprint, "hostKeyType": info.hostKey.type,
                "newlyTrusted": info.newlyTrusted,
                "cipher": info.cipher, "mac": info.mac, "kex": info.keyExchange,
            ].merging(info.hostKeyTrustJSON) { $1 }
        case .forwarding(let listen, let target, let alsoListening, let openCode):
            return [
                "event": "forwarding", "status": "connected", "localHost": listen.host, "localPort": listen.port,
                "localHosts": ([listen] + alsoListening).map(\.host),
                "remoteHost": target.host, "remotePort": target.port, "openCode": openCode,
            ]
        case .disconnected(let reason, let retryIn):
            return [
                "event": "disconnected", "status": "disconnected", "reason": reason.text,
                "retryIn": (retryIn * 10).rounded() / 10,
            ]
        case .nothingListening(let target, let command):
            return [
                "event": "nothingListening", "status": "error", "message": "nothing listens on VPS \(target)",
                "remoteHost": target.host, "remotePort": target.port, "reverseCommand": command,
            ]
        case .forwardRefused(let target, let reason):
            return [
                "event": "forwardRefused", "status": "error", "message": reason, "remoteHost": target.host,
                "remotePort": target.port,
            ]
        case .clientOpened(let id, let peer):
            return ["event": "clientOpened", "id": id, "peer": peer]
        case .clientClosed(let id, let sent, let received):
            return ["event": "clientClosed", "id": id, "sent": sent, "received": received]
        case .clientDropped(let id, let reason):
            return ["event": "clientClosed", "id": id, "reason": reason]
        case .stopping(let reason):
            return ["event": "stopping", "status": "disconnected", "reason": reason.text]
        case .warning(let text):
            return ["event": "warning", "message": text]
        case .openCodeHome(let home, let detail):
            return ["event": "openCodeHome", "home": home.description, "message": detail]
        case .pairLinks(let port, let text):
            return ["event": "pairLinks", "port": port, "message": text]
        case .notice(let text):
            return ["event": "notice", "message": text]
        case .notification(let moment):
            return Self.jsonObject(moment)
        case .listening, .listenRefused, .portTakenBack, .homeUnreachable:
            return homeSideJSONObject
        case .roaming(let event):
            return event.jsonObject
        case .streamStalled(let stall):
            return stall.jsonObject
        }
    }

    /// An agent's moment as a JSON object (its far-side texts shown safely, bounded).
    private static func jsonObject(_ moment: AgentMoment) -> [String: Any] {
        var object: [String: Any] = [
            "event": "notification", "kind": moment.kind.rawValue,
            "sessionID": OutsideText.shown(moment.sessionID, limit: 200),
            "headline": moment.headline, "message": moment.message,
        ]
        if let title = moment.title { object["title"] = OutsideText.shown(title, limit: 200) }
        if let directory = moment.directory { object["directory"] = OutsideText.shown(directory, limit: 500) }
        return object
    }

    /// The home side's own events (`home up`'s listens) as JSON objects; `jsonObject` sends only
    /// those here.
    private var homeSideJSONObject: [String: Any] {
        switch self {
        case .listening(let listen, let target):
            return [
                "event": "listening", "status": "connected", "remoteHost": listen.host, "remotePort": listen.port,
                "homeHost": target.host, "homePort": target.port,
            ]
        case .listenRefused(let listen, let retryIn, let holder):
            return [
                "event": "listenRefused", "status": "error",
                "message": "the VPS refused to listen on \(listen) (port busy)",
                "remoteHost": listen.host, "remotePort": listen.port, "retryIn": (retryIn * 10).rounded() / 10,
            ]
            .merging(holder.jsonObject) { $1 }
        case .portTakenBack(let listen, let report):
            return [
                "event": "portTakenBack", "status": "connecting", "message": report.summary, "remoteHost": listen.host,
                "remotePort": listen.port, "client": report.client ?? "", "pid": report.pid ?? 0,
            ]
        case .homeUnreachable(let home, let reason, let openCode):
            return [
                "event": "homeUnreachable", "status": "error",
                "message": HomeGatewayAnswer.unreachable(home: home, reason: reason, openCode: openCode).error,
                "reason": reason, "homeHost": home.host, "homePort": home.port,
            ]
        default:
            return ["event": "\(self)"]
        }
    }
}

/// One JSON object per line, keys sorted so the output is stable.
public func jsonLine(_ object: [String: Any]) -> String {
    JSONText.line(object)
}

extension SessionInfo {
    /// `hostKeyTrust` (known, first-use, openssh-known-hosts) and, for the last, `hostKeyVerifiedBy` (`~/.ssh/known_hosts:3`).
    var hostKeyTrustJSON: [String: Any] {
        var object: [String: Any] = ["hostKeyTrust": hostKeyTrust.tag]
        if case .openSSH(let place) = hostKeyTrust { object["hostKeyVerifiedBy"] = place.description }
        return object
    }
}
