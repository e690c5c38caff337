/// The keys older versions read a section's forwards from: OpenCode's as loose fields
/// (`remotePort`, `remoteHost`, and the tunnel's `localPort` or the home's `homePort` and
/// `homeHost`) and the others as `forwards` texts. A section without `forwardList` (saved by an
/// older version) is read from them; this version writes them beside `forwardList` as its
/// copy, so an older octunnel still reads the file. `forwardList` is what a person edits: a copy
/// that says something else is overruled by the list, said once (`ForwardListMismatch`), and
/// rewritten; a section whose copy was removed reads from its list alone.
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

    init(
        direction: Forward.Direction, remotePort: Int, remoteHost: String?, localPort: Int? = nil, homePort: Int? = nil,
        homeHost: String? = nil, others: [Forward]
    ) {
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
        let openCode =
            direction == .local
            ? Forward(
                direction: .local, listen: HostPort(host: Defaults.bind, port: localPort ?? 0), target: vps,
                isOpenCode: true)
            : Forward(
                direction: .remote, listen: vps,
                target: HostPort(host: homeHost ?? Defaults.homeHost, port: homePort ?? 0), isOpenCode: true)
        return [openCode] + others
    }

    /// The keys as a section holds them, each read alone and possibly absent (a hand edit may
    /// remove or break any): what `forwardList` is checked against.
    struct Saved: Decodable {
        var remotePort: Int?, localPort: Int?, homePort: Int?
        var remoteHost: String?, homeHost: String?
        var forwards: [String]?
        /// A key that is there but not of its type.
        var brokenKey: String?

        init(from decoder: Decoder) throws {
            let keys = try decoder.container(keyedBy: Key.self)
            var broken: String?
            func read<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
                do { return try keys.decodeIfPresent(type, forKey: key) } catch { broken = key.rawValue; return nil }
            }
            (remotePort, localPort, homePort) = (
                read(Int.self, .remotePort), read(Int.self, .localPort), read(Int.self, .homePort)
            )
            (remoteHost, homeHost) = (read(String.self, .remoteHost), read(String.self, .homeHost))
            forwards = read([String].self, .forwards)
            brokenKey = broken
        }

        /// The first key of the copy whose value is not what `forwards` (OpenCode's first) says
        /// (an absent host counts as its default, an absent `forwards` as none), or nil when the
        /// copy is right or the section holds none of its keys (removed by hand: nothing to say).
        func mismatch(with forwards: [Forward]) -> ForwardListMismatch? {
            let direction = forwards[0].direction
            guard
                brokenKey != nil || remotePort != nil || remoteHost != nil || self.forwards != nil
                    || (direction == .local ? localPort != nil : homePort != nil || homeHost != nil)
            else { return nil }
            let copy = OldForwardKeys(copyOf: forwards)
            let listed = "opencode " + forwards[0].specification
            if let brokenKey { return ForwardListMismatch(key: brokenKey, saved: "not of its type", listed: listed) }
            let local = direction == .local
            let pairs: [(key: String, saved: String?, copy: String?)] = [
                ("remotePort", remotePort.map(String.init), String(copy.remotePort)),
                ("localPort", local ? localPort.map(String.init) : nil, copy.localPort.map(String.init)),
                ("homePort", local ? nil : homePort.map(String.init), copy.homePort.map(String.init)),
                ("remoteHost", remoteHost ?? Defaults.remoteHost, copy.remoteHost ?? Defaults.remoteHost),
                (
                    "homeHost", local ? nil : homeHost ?? Defaults.homeHost,
                    local ? nil : copy.homeHost ?? Defaults.homeHost
                ),
            ]
            for pair in pairs where pair.saved != pair.copy {
                return ForwardListMismatch(key: pair.key, saved: pair.saved ?? "absent", listed: listed)
            }
            let bind = local ? Defaults.bind : Defaults.remoteHost
            let others = try? (self.forwards ?? []).map {
                try Forward.parse($0, direction: direction, defaultBind: bind)
            }
            if others != copy.others {
                let saved = others.map(ForwardListMismatch.texts) ?? "not forwards octunnel reads"
                return ForwardListMismatch(
                    key: "forwards", saved: saved, listed: ForwardListMismatch.texts(copy.others))
            }
            return nil
        }
    }

    enum Key: String, CodingKey, CaseIterable { case remotePort, localPort, homePort, remoteHost, homeHost, forwards }

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
