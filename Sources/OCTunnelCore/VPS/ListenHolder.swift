/// What holds the VPS port `home up` was refused, as the refused-listen event tells it.
public enum ListenHolder: Sendable {
    /// The key's forced command answered (`PortReclaimProgram`).
    case found(PortReclaimReport)
    /// The key's line has no program that can take the port back (an old line: `/bin/false`,
    /// or no forced command). `line` is the one to install, given in full the first time.
    case oldKeyLine(line: String?)
    /// The program could not be asked: `why` (no answer in time, or sshd refused its channel,
    /// as with `MaxSessions 1`).
    case noAnswer(why: String)

    /// What a dead session's port costs without the program, said once for every text that
    /// used to prescribe ClientAliveInterval alone.
    public static let withoutProgram =
        "sshd frees it when it notices the session died: " + "`ClientAliveInterval 15` (and `ClientAliveCountMax "
        + "3`) in sshd_config does that within 45 s only "
        + "while nothing connects to the port; while clients keep trying, only TCP gives up, after 15-30 min"

    /// The clause after "the VPS refused to listen on …: ".
    public var text: String {
        switch self {
        case .found(let report):
            switch report.result {
            case .unseen:
                return "it is \(report.summary). Until it goes, \(Self.withoutProgram)"
            default:
                return "it is \(report.summary)"
            }
        case .oldKeyLine(let line):
            let install = line == nil ? "(the line to install was shown above)" : "(the line to install follows)"
            return "the port is taken, most likely by this machine's earlier "
                + "session that died without closing. octunnel takes such "
                + "a port back itself when the key's authorized_keys line "
                + "allows it, and this key's line does not \(install); until it is replaced, \(Self.withoutProgram)"
        case .noAnswer(let why):
            return
                "the port is taken, and the key's program on the VPS could not be asked (\(why)); asked again on the next retry"
        }
    }

    /// Lines after the event's own (the authorized_keys line to install, the first time).
    public var appendix: String {
        guard case .oldKeyLine(let line?) = self else { return "" }
        return
            "\nOn the VPS, replace this key's line in authorized_keys with this one (`octunnel pubkey --restrict --listen`):\n  \(line)"
    }

    /// The JSON fields the refused-listen event adds.
    var jsonObject: [String: Any] {
        switch self {
        case .found(let report):
            var object: [String: Any] = ["holder": report.result.rawValue, "detail": report.summary]
            if let client = report.client { object["client"] = client }
            if let pid = report.pid { object["pid"] = pid }
            return object
        case .oldKeyLine(let line):
            var object: [String: Any] = [
                "holder": "unknown",
                "fix": "the authorized_keys line printed by `octunnel pubkey "
                    + "--restrict --listen` (octunnel then takes a dead session's port back itself)",
                "detail": Self.withoutProgram,
            ]
            if let line { object["authorizedKeysLine"] = line }
            return object
        case .noAnswer(let why):
            return ["holder": "unknown", "detail": "the key's program on the VPS could not be asked: \(why)"]
        }
    }
}
