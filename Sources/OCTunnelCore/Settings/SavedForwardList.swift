/// A saved section's `forwardList`: every forward of the role, OpenCode's marked, each written as
/// its flag writes it (`Forward.specification`); the direction is the section's (`-L` in
/// `tunnel`, `-R` in `home`), so it is not written:
///
///     "forwardList": [{"opencode": true, "forward": "127.0.0.1:4096:127.0.0.1:18080"},
///                     {"forward": "127.0.0.1:3000:127.0.0.1:18081"}]
///
/// An object per forward, not a bare string, so the mark sits with its forward and a later
/// field needs no new shape.
struct SavedForwardList: Codable, Equatable {
    /// One forward of the list.
    struct Entry: Codable, Equatable {
        /// True for OpenCode's forward; absent for the others.
        var opencode: Bool?
        /// `[BIND:]PORT:HOST:HOSTPORT`, as `ssh -L` / `ssh -R` writes it.
        var forward: String
    }

    var entries: [Entry]

    init(from decoder: Decoder) throws { entries = try [Entry](from: decoder) }

    func encode(to encoder: Encoder) throws { try entries.encode(to: encoder) }

    /// The list of `forwards` (OpenCode's first, as the settings hold it).
    init(_ forwards: [Forward]) {
        entries = forwards.map { Entry(opencode: $0.isOpenCode ? true : nil, forward: $0.specification) }
    }

    /// The forwards, OpenCode's first, each parsed as `direction` (BIND, when not written,
    /// `defaultBind`); exactly one is OpenCode's.
    func forwards(_ direction: Forward.Direction, defaultBind: String) throws(TargetParseError) -> [Forward] {
        var openCode: [Forward] = []
        var others: [Forward] = []
        for entry in entries {
            var forward = try Forward.parse(entry.forward, direction: direction, defaultBind: defaultBind)
            forward.isOpenCode = entry.opencode == true
            if forward.isOpenCode { openCode.append(forward) } else { others.append(forward) }
        }
        guard openCode.count == 1 else {
            throw TargetParseError("forwardList has \(openCode.count) forwards marked \"opencode\": true, not one")
        }
        return openCode + others
    }
}
