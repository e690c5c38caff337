/// The keys older versions read a section's forwards from: OpenCode's as loose fields
/// (`remotePort`, `remoteHost`, and the tunnel's `localPort` or the home's `homePort` and
/// `homeHost`) and the others as `forwards` texts. A section without `forwardList` (saved by an
/// older version) is read from them; this version writes them beside `forwardList` as its
/// read-only copy, so an older octunnel still reads the file, and refuses a section whose copy
/// says something else than its list (`ForwardListMismatch`).
struct OldForwardKeys: Encodable, Equatable {
    /// `-L` for the tunnel section, `-R` for the home section.
    let direction: Forward.Direction
    var remotePort: Int
    /// Absent: `Defaults.remoteHost`.
    var remoteHost: String?
    /// The laptop's port (`tunnel`).
    var localPort: Int?
    /// OpenCode's port at home (`home`; the tunnel's `homePort` is a setting of its own).
    var homePort: Int?
    /// The address OpenCode listens on at home (`home`); absent: `Defaults.homeHost`.
    var homeHost: String?
    /// The forwards beside OpenCode's.
    var others: [Forward]

    init(direction: Forward.Direction, remotePort: Int, remoteHost: String?, localPort: Int? = nil, homePort: Int? = nil,
         homeHost: String? = nil, others: [Forward]) {
        (self.direction, self.remotePort, self.remoteHost) = (direction, remotePort, remoteHost)
        (self.localPort, self.homePort, self.homeHost, self.others) = (localPort, homePort, homeHost, others)
    }

    /// The copy of `forwards` (OpenCode's first), hosts equal to their defaults left out as
    /// older versions save them.
    init(copyOf forwards: [Forward]) {
        let openCode = forwards[0]
        direction = openCode.direction
        others = Array(forwards.dropFirst())
        remotePort = openCode.vpsEnd.port
        remoteHost = Self.unlessDefault(openCode.vpsEnd.host, Defaults.remoteHost)
        if direction == .local {
            localPort = openCode.listen.port
        } else {
            homePort = openCode.target.port
            homeHost = Self.unlessDefault(openCode.target.host, Defaults.homeHost)
        }
    }

    /// The forwards these keys say, OpenCode's first (a tunnel's listening on `Defaults.bind`:
    /// `--bind` is never saved).
    var forwards: [Forward] {
        let vps = HostPort(host: remoteHost ?? Defaults.remoteHost, port: remotePort)
        let openCode = direction == .local
            ? Forward(direction: .local, listen: HostPort(host: Defaults.bind, port: localPort ?? 0), target: vps, isOpenCode: true)
            : Forward(direction: .remote, listen: vps, target: HostPort(host: homeHost ?? Defaults.homeHost, port: homePort ?? 0), isOpenCode: true)
        return [openCode] + others
    }

    /// The first key whose value is not what `forwards`' copy holds (an absent host counts
    /// as its default), or nil when the copy is right.
    func mismatch(with forwards: [Forward]) -> ForwardListMismatch? {
        let copy = Self(copyOf: forwards)
        let pairs: [(key: String, saved: String?, copy: String?)] = [
            ("remotePort", String(remotePort), String(copy.remotePort)),
            ("localPort", localPort.map(String.init), copy.localPort.map(String.init)),
            ("homePort", homePort.map(String.init), copy.homePort.map(String.init)),
            ("remoteHost", remoteHost ?? Defaults.remoteHost, copy.remoteHost ?? Defaults.remoteHost),
            ("homeHost", direction == .remote ? homeHost ?? Defaults.homeHost : nil, direction == .remote ? copy.homeHost ?? Defaults.homeHost : nil),
        ]
        for pair in pairs where pair.saved != pair.copy {
            return ForwardListMismatch(key: pair.key, saved: pair.saved ?? "absent", listed: "opencode " + forwards[0].specification)
        }
        if others != copy.others {
            return ForwardListMismatch(key: "forwards", saved: ForwardListMismatch.texts(others), listed: ForwardListMismatch.texts(copy.others))
        }
        return nil
    }

    private enum Key: String, CodingKey { case remotePort, localPort, homePort, remoteHost, homeHost, forwards }

    /// Writes the keys into the section being encoded, as older versions saved them: a host
    /// equal to its default and an empty `forwards` left out.
    func encode(to encoder: Encoder) throws {
        var keys = encoder.container(keyedBy: Key.self)
        try keys.encode(remotePort, forKey: .remotePort)
        try keys.encodeIfPresent(localPort, forKey: .localPort)
        try keys.encodeIfPresent(homePort, forKey: .homePort)
        try keys.encodeIfPresent(remoteHost, forKey: .remoteHost)
        try keys.encodeIfPresent(homeHost, forKey: .homeHost)
        if !others.isEmpty { try keys.encode(others.map(\.specification), forKey: .forwards) }
    }

    private static func unlessDefault(_ host: String, _ defaultHost: String) -> String? {
        host == defaultHost ? nil : host
    }
}
