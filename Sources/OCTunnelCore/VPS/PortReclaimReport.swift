/// The one line `PortReclaimProgram` prints on the VPS, parsed:
/// `octunnel-reclaim v=1 result=freed port=127.0.0.1:18080 pid=812 client=203.0.113.7:51234 txq=92 retrans=5`,
/// with `beat=6` when the holder had a heartbeat (seconds watched without one).
public struct PortReclaimReport: Equatable, Sendable {
    /// What the program found and did.
    public enum Result: String, Sendable {
        /// It ended the holder, a dead sshd session of this user: listen again now.
        case freed
        /// Nothing listens on the port (any more): listen again now.
        case free
        /// The holder's client connection answered, or its heartbeat came (a live home): it keeps the port.
        case live
        /// Read only (`octunnel-inspect`): an sshd session holds it, not proven dead.
        case held
        /// Read only: an sshd session whose client connection is dead holds it.
        case dead
        /// An sshd session holds it, but its client connection could not be proven dead or
        /// alive within the program's wait (retransmitting but not yet 3 times, or idle and
        /// nothing could provoke it): asked again on the next retry.
        case unproven
        /// Not an sshd session of this user (another program, or another user's): left alone.
        case other
        /// The caller's own session holds it.
        case own
        /// A listener exists, but no process this user may look at holds it (a non-root VPS
        /// user cannot read sshd's session processes: they change uid, so they are not dumpable).
        case unseen
        /// The verb was not one the program knows.
        case refused
        /// Ending the holder failed, or the port stayed held after it.
        case failed
    }

    public let result: Result
    /// The listen the program watches, as it printed it.
    public let port: String
    public let pid: Int?
    /// The holder's process name (`other`).
    public let name: String?
    /// The holder's client address and port, e.g. `203.0.113.7:51234` or `[2001:db8:0:0:0:0:0:7]:51234`.
    public let client: String?
    /// Bytes sent to the client and not acknowledged.
    public let unacknowledged: Int?
    /// How many times in a row the kernel resent them.
    public let retransmissions: Int?
    /// Seconds the client has left them unacknowledged, at least (from the retransmission
    /// timer's backoff; the connection may have been silent longer before anything was sent).
    public let silentAtLeast: Int?
    /// For a holder with a heartbeat (`octunnel-beat`): the seconds the program watched it
    /// without one arriving (0: one came, the home is live). Nil: no heartbeat, TCP's evidence only.
    public let heartbeatAge: Int?
    /// The owner of the listening socket (`unseen`, `other`).
    public let uid: Int?
    public let reason: String?

    /// Finds the program's line in a command's output; nil when there is none (an old key
    /// line: `/bin/false` prints nothing, a key without a forced command runs a shell that
    /// does not know the verb).
    public static func parse(_ output: String) -> PortReclaimReport? {
        for line in output.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let words = line.split(separator: " ")
            guard words.first == "octunnel-reclaim", words.count >= 3 else { continue }
            var fields: [String: String] = [:]
            for word in words.dropFirst() {
                guard let equals = word.firstIndex(of: "=") else { continue }
                // The VPS wrote it: shown only as OutsideText allows (no terminal controls, short).
                fields[String(word[..<equals])] = OutsideText.shown(
                    String(word[word.index(after: equals)...]), limit: 100)
            }
            guard fields["v"] == "1", let result = fields["result"].flatMap(Result.init(rawValue:)) else { continue }
            return PortReclaimReport(
                result: result, port: fields["port"] ?? "", pid: fields["pid"].flatMap { Int($0) },
                name: fields["name"], client: fields["client"],
                unacknowledged: fields["txq"].flatMap { Int($0) },
                retransmissions: fields["retrans"].flatMap { Int($0) },
                silentAtLeast: fields["silent"].flatMap { Int($0) },
                heartbeatAge: fields["beat"].flatMap { Int($0) },
                uid: fields["uid"].flatMap { Int($0) }, reason: fields["reason"])
        }
        return nil
    }

    /// Whether `home up` should listen again at once.
    public var portIsFree: Bool { result == .freed || result == .free }

    /// Whether TCP proved the holder's client dead (resent 3 times), rather than its heartbeat.
    private var resentEnough: Bool { (unacknowledged ?? 0) > 0 && (retransmissions ?? 0) >= 3 }

    /// One clause for messages: who holds the port and why it was or was not taken back.
    public var summary: String {
        let from = client.map { " from \($0)" } ?? ""
        let resends =
            "\(unacknowledged ?? 0) bytes unacknowledged, resent \(retransmissions ?? 0) times"
            + ((silentAtLeast ?? 0) > 0 ? ", silent at least \(Self.duration(silentAtLeast ?? 0))" : "")
        // The heartbeat is the evidence when the holder has one, unless TCP proved it dead first.
        let evidence = heartbeatAge.map { resentEnough ? resends : "no heartbeat for \(Self.duration($0))" } ?? resends
        switch result {
        case .freed:
            return "ended the dead home session\(from) that held it (pid \(pid.map(String.init) ?? "?"), \(evidence))"
        case .free:
            return "nothing holds it any more"
        case .live where heartbeatAge != nil:
            return "held by a live home session\(from): its heartbeat came just now, so it keeps the port"
        case .live:
            return "held by a live home session\(from): it answered just now, so it keeps the port"
        case .held:
            return "held by an sshd session\(from) that is not proven dead (\(evidence))"
        case .dead:
            return "held by a dead home session\(from) (\(evidence))"
        case .unproven where reason?.hasPrefix("connections:") == true:
            let found = reason!.dropFirst("connections:".count)
            return
                "held by an sshd session (pid \(pid.map(String.init) ?? "?")) whose client connection could not be singled out "
                + "(\(found) found for 2 s, 1 needed)"
        case .unproven where heartbeatAge != nil:
            return
                "held by an sshd session\(from) not yet proven dead (\(evidence); \(PortReclaimProgram.heartbeatSilence) s needed)"
        case .unproven:
            return "held by an sshd session\(from) not yet proven dead (\(evidence); resent 3 times needed)"
        case .other:
            return "taken by another program (\(name ?? "?"), " + "pid \(pid.map(String.init) ?? "?"), uid "
                + "\(uid.map(String.init) ?? "?")), not an sshd session of this user: left alone"
        case .own:
            return "held by this very session"
        case .unseen:
            return "held by a process this VPS user cannot look at (uid \(uid.map(String.init) ?? "?")"
                + "): as a non-root user, sshd's session processes are not readable "
                + "in /proc, so octunnel cannot tell a dead session from anything else"
        case .refused:
            return "the VPS program did not know the verb"
        case .failed:
            return "ending the dead session failed (\(reason ?? "?"))"
        }
    }

    /// `14 s`, `3 min`, `2 h 5 min`.
    static func duration(_ seconds: Int) -> String {
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }
}
