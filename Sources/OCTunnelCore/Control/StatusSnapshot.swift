import Foundation

/// What a running `tunnel up` (or `home up`) says about itself when `status` asks: built on
/// the loop thread from what the session driver and its forward already count, sent as one
/// JSON object. Field names are those of the `--json` event stream where they overlap
/// (`hostKey`, `cipher`, `status`, `localHost`, `retryIn`, …).
public struct StatusSnapshot: Sendable, Equatable {
    /// The session's state as `status --json` names it.
    public enum State: String, Sendable, CaseIterable {
        /// The first connection attempt is under way.
        case connecting
        /// A session is up.
        case connected
        /// No session: waiting `retryIn` seconds before the next attempt.
        case disconnected
        /// A session was lost or an attempt failed; another attempt is under way.
        case retrying
        /// The process is saying goodbye.
        case stopping

        /// The client app's coarser term, as in the event stream's `status`.
        public var status: String {
            switch self {
            case .connecting, .retrying: return "connecting"
            case .connected: return "connected"
            case .disconnected, .stopping: return "disconnected"
            }
        }
    }

    /// The last health test of OpenCode through the tunnel.
    public struct Health: Sendable, Equatable {
        public var ok: Bool
        /// OpenCode's version, when it answered.
        public var version: String?
        public var checkedAt: Date
        /// What was found (the route and API that answered), or what failed.
        public var detail: String

        public init(ok: Bool, version: String?, checkedAt: Date, detail: String) {
            self.ok = ok
            self.version = version
            self.checkedAt = checkedAt
            self.detail = detail
        }
    }

    /// One forward of the session, as it counts for itself (`status` shows each one).
    public struct ForwardStatus: Sendable, Equatable {
        /// The forward as it runs: `listen` with the port actually bound, `target` where its
        /// connections go now (at home: where OpenCode 2's service moved, if it did).
        public var forward: Forward
        public var openConnections: Int
        public var totalConnections: Int
        public var bytesIn: Int
        public var bytesOut: Int
        /// Its own last failure (a refused forward, nothing listening behind the VPS).
        public var lastError: String?

        public init(
            _ forward: Forward, openConnections: Int = 0, totalConnections: Int = 0,
            bytesIn: Int = 0, bytesOut: Int = 0, lastError: String? = nil
        ) {
            self.forward = forward
            self.openConnections = openConnections
            self.totalConnections = totalConnections
            self.bytesIn = bytesIn
            self.bytesOut = bytesOut
            self.lastError = lastError
        }

        /// This machine's end, `status --json`'s `local`: where clients connect (`-L`: its
        /// listen) or where connections go at home (`-R`: its target).
        public var thisMachineEnd: HostPort { forward.direction == .local ? forward.listen : forward.target }

        /// The VPS's end, `status --json`'s `remote`: where a `-L` goes (its target) or where a
        /// `-R` listens (its listen).
        public var vpsEnd: HostPort { forward.vpsEnd }
    }

    public var role: Role
    public var profile: ProfileName
    public var pid: Int
    public var state: State
    public var target: SSHTarget
    /// The VPS's host key (`SHA256:…`) and algorithms of the current session, else of the last one.
    public var hostKey: String?
    public var hostKeyType: String?
    /// The key that signed in (`SHA256:…`) and its file (nil: the ssh-agent's), of the current
    /// session, else of the last one (issue 55: the key octunnel authorized is the one used).
    public var clientKey: String?
    public var clientKeyFile: String?
    public var cipher: String?
    public var mac: String?
    public var kex: String?
    /// When the current session came up (nil while none is up).
    public var connectedSince: Date?
    /// Seconds until the next connection attempt (state `disconnected` only).
    public var retryIn: Double?
    /// OpenCode's forward's end on this machine, `status --json`'s `local` (kept for scripts; an
    /// alias of `forwards[0].thisMachineEnd`): where clients connect (`tunnel`: its listen) or
    /// OpenCode at home (`home`: its target). The counts below are the sums over every forward.
    public var local: HostPort?
    /// More addresses clients connect to, on `local`'s port (::1 beside 127.0.0.1; `tunnel` only).
    public var alsoLocal: [HostPort] = []
    /// OpenCode's forward's end on the VPS, `status --json`'s `remote` (an alias of
    /// `forwards[0].vpsEnd`): where it goes (`tunnel`: its target) or where the VPS listens
    /// (`home`: its listen).
    public var remote: HostPort?
    /// Connections open now (waiting for a channel included) and accepted since start.
    public var openConnections: Int
    public var totalConnections: Int
    /// Bytes from the VPS to the clients (`bytesIn`) and from the clients to the VPS (`bytesOut`),
    /// open connections included.
    public var bytesIn: Int
    public var bytesOut: Int
    /// Sessions established after the first one.
    public var reconnects: Int
    /// SSH sessions live now: 1 normally, 2 while one replaced by a planned reconnect drains
    /// (`sessionsDraining` of them), 0 while none is up.
    public var sessions = 0
    public var sessionsDraining = 0
    /// Extra sessions opened for bursts of connections since start (`BurstSession`; `sessions` counts one up now).
    public var burstSessions = 0
    /// Connections on the extra session up now: long ones opened during its burst (an event
    /// stream) keep it up until they end.
    public var burstSessionConnections = 0
    /// Streams found stalled (bytes waiting with room to take them) and moved again: should stay 0.
    public var stalls: Int
    /// Why the last session ended or the last attempt failed, or the last forward refused.
    public var lastError: String?
    /// Every forward of the session, OpenCode's first, each with its own counts.
    public var forwards: [ForwardStatus] = []
    public var lastErrorAt: Date?
    public var health: Health?
    /// The last three notifications (`tunnel up`, issue 40), the newest last.
    public var notifications: [Notified] = []
    /// How many permission requests and questions wait for an answer, as OpenCode's event stream
    /// told `tunnel up` (issue 48); nil when it follows none.
    public var permissionsWaiting: Int?

    /// One notification as `status` shows it.
    public struct Notified: Sendable, Equatable {
        public var kind: String
        public var text: String
        public var at: Date
    }
    /// The last network change or wake the driver acted on, and what it did ("… : kept").
    public var lastNetworkEvent: String?
    public var lastNetworkEventAt: Date?

    public init(role: Role, profile: ProfileName, pid: Int, state: State, target: SSHTarget) {
        self.role = role
        self.profile = profile
        self.pid = pid
        self.state = state
        self.target = target
        openConnections = 0
        totalConnections = 0
        bytesIn = 0
        bytesOut = 0
        reconnects = 0
        stalls = 0
    }

    /// Keeps `text` as `lastError` if it is newer than the one held (the driver and the
    /// forward each know their own failures).
    public mutating func noteError(_ text: String, at time: Date) {
        if let lastErrorAt, lastErrorAt > time { return }
        lastError = text
        lastErrorAt = time
    }
}

// MARK: - JSON

extension StatusSnapshot {
    /// The object `status --json` prints: every field present, `null` when unknown.
    public var jsonObject: [String: Any] {
        func orNull(_ value: Any?) -> Any { value ?? NSNull() }
        var object: [String: Any] = [
            "role": role.rawValue, "profile": profile.rawValue, "pid": pid,
            "state": state.rawValue, "status": state.status,
            "target": target.description, "host": target.host, "port": target.port, "user": target.user,
            "hostKey": orNull(hostKey), "hostKeyType": orNull(hostKeyType),
            "clientKey": orNull(clientKey), "clientKeyFile": orNull(clientKeyFile),
            "cipher": orNull(cipher), "mac": orNull(mac), "kex": orNull(kex),
            "connectedSince": orNull(connectedSince.map(Self.formatDate)),
            "retryIn": orNull(retryIn.map { ($0 * 10).rounded() / 10 }),
            "local": orNull(local?.description), "remote": orNull(remote?.description),
            "localHost": orNull(local?.host), "localPort": orNull(local?.port),
            "localHosts": local.map { ([$0] + alsoLocal).map(\.host) } ?? [],
            "remoteHost": orNull(remote?.host), "remotePort": orNull(remote?.port),
            "openConnections": openConnections, "totalConnections": totalConnections,
            "bytesIn": bytesIn, "bytesOut": bytesOut, "reconnects": reconnects, "stalls": stalls,
            "sessions": sessions, "sessionsDraining": sessionsDraining, "burstSessions": burstSessions,
            "burstSessionConnections": burstSessionConnections,
            "lastError": orNull(lastError), "lastErrorAt": orNull(lastErrorAt.map(Self.formatDate)),
            "lastNetworkEvent": orNull(lastNetworkEvent),
            "lastNetworkEventAt": orNull(lastNetworkEventAt.map(Self.formatDate)),
        ]
        object["forwards"] = forwards.map { forward -> [String: Any] in
            [
                "listen": forward.forward.listen.description, "target": forward.forward.target.description,
                "openCode": forward.forward.isOpenCode,
                "local": forward.thisMachineEnd.description, "remote": forward.vpsEnd.description,
                "openConnections": forward.openConnections, "totalConnections": forward.totalConnections,
                "bytesIn": forward.bytesIn, "bytesOut": forward.bytesOut, "lastError": orNull(forward.lastError),
            ]
        }
        if let health {
            object["health"] = [
                "ok": health.ok, "version": orNull(health.version),
                "checkedAt": Self.formatDate(health.checkedAt), "detail": health.detail,
            ]
        } else {
            object["health"] = NSNull()
        }
        object["notifications"] = notifications.map {
            ["kind": $0.kind, "text": $0.text, "at": Self.formatDate($0.at)]
        }
        object["permissionsWaiting"] = permissionsWaiting.map { $0 as Any } ?? NSNull()
        return object
    }

    /// One line of JSON, keys sorted (what the status socket sends).
    public var jsonText: String { jsonLine(jsonObject) }

    /// Reads what `jsonText` wrote (decoded as `StatusWire`); nil when it is not a status object.
    public init?(jsonText: String) {
        guard let wire = StatusWire(jsonText: jsonText),
            let role = wire.role.flatMap(Role.init(rawValue:)),
            let profile = wire.profile.flatMap({ try? ProfileName($0) }),
            let state = wire.state.flatMap(State.init(rawValue:)),
            let target = wire.target.flatMap({ try? SSHTarget.parse($0) })
        else { return nil }
        self.init(role: role, profile: profile, pid: wire.pid ?? 0, state: state, target: target)
        (hostKey, hostKeyType, cipher, mac, kex) = (wire.hostKey, wire.hostKeyType, wire.cipher, wire.mac, wire.kex)
        (clientKey, clientKeyFile) = (wire.clientKey, wire.clientKeyFile)
        connectedSince = wire.connectedSince.flatMap(Self.parseDate)
        retryIn = wire.retryIn
        local = wire.local.flatMap { try? HostPort.parse($0) }
        if let local, let hosts = wire.localHosts {
            alsoLocal = hosts.dropFirst().map { HostPort(host: $0, port: local.port) }
        }
        remote = wire.remote.flatMap { try? HostPort.parse($0) }
        (openConnections, totalConnections) = (wire.openConnections ?? 0, wire.totalConnections ?? 0)
        (bytesIn, bytesOut, reconnects, stalls) = (
            wire.bytesIn ?? 0, wire.bytesOut ?? 0, wire.reconnects ?? 0, wire.stalls ?? 0
        )
        (sessions, sessionsDraining) = (max(0, wire.sessions ?? 0), max(0, wire.sessionsDraining ?? 0))
        burstSessions = max(0, wire.burstSessions ?? 0)
        burstSessionConnections = max(0, wire.burstSessionConnections ?? 0)
        (lastError, lastErrorAt) = (wire.lastError, wire.lastErrorAt.flatMap(Self.parseDate))
        (lastNetworkEvent, lastNetworkEventAt) = (
            wire.lastNetworkEvent, wire.lastNetworkEventAt.flatMap(Self.parseDate)
        )
        forwards = (wire.forwards ?? []).enumerated().compactMap { index, item in
            guard let forward = Self.forward(item, role: role, index: index) else { return nil }
            return ForwardStatus(
                forward, openConnections: item.openConnections ?? 0, totalConnections: item.totalConnections ?? 0,
                bytesIn: item.bytesIn ?? 0, bytesOut: item.bytesOut ?? 0, lastError: item.lastError)
        }
        if let health = wire.health, let ok = health.ok, let checkedAt = health.checkedAt.flatMap(Self.parseDate) {
            self.health = Health(ok: ok, version: health.version, checkedAt: checkedAt, detail: health.detail ?? "")
        }
        notifications = (wire.notifications ?? []).suffix(3).compactMap { item in
            guard let kind = item.kind, let text = item.text, let at = item.at.flatMap(Self.parseDate) else {
                return nil
            }
            return Notified(kind: kind, text: text, at: at)
        }
        permissionsWaiting = wire.permissionsWaiting.map { max(0, $0) }
    }

    /// One item of `forwards` as a `Forward`: its `listen` and `target`, else (a status from
    /// before them) its `local` and `remote`, which end is which said by the role; OpenCode's is
    /// the first unless `openCode` says.
    private static func forward(_ item: StatusWire.ForwardItem, role: Role, index: Int) -> Forward? {
        func address(_ text: String?) -> HostPort? { text.flatMap { try? HostPort.parse($0) } }
        let direction: Forward.Direction = role == .tunnel ? .local : .remote
        let isOpenCode = item.openCode ?? (index == 0)
        if let listen = address(item.listen), let target = address(item.target) {
            return Forward(direction: direction, listen: listen, target: target, isOpenCode: isOpenCode)
        }
        guard let local = address(item.local), let remote = address(item.remote) else { return nil }
        return direction == .local
            ? Forward(direction: direction, listen: local, target: remote, isOpenCode: isOpenCode)
            : Forward(direction: direction, listen: remote, target: local, isOpenCode: isOpenCode)
    }

    /// ISO 8601 in UTC with milliseconds (`2026-11-22T15:25:23.120Z`), without ICU (`UTCTimestamp`).
    static func formatDate(_ date: Date) -> String {
        UTCTimestamp.string(from: date)
    }

    /// With or without the milliseconds.
    static func parseDate(_ text: String) -> Date? {
        UTCTimestamp.date(from: text)
    }
}
