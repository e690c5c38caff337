/// `config.json` as octunnel reads it: its profiles by name, each with a section per role and
/// any other (`push`, or one a newer version wrote), and the file's other keys (`version`, and
/// any this version does not know). A section is decoded only when asked for (`ConfigFile.Contents`);
/// every value is kept as read (`JSONValue`), so a write gives back whatever it did not change.
struct ConfigDocument: Equatable {
    /// One profile: its sections, each as the file holds it.
    struct Profile: Equatable {
        /// The `tunnel` and `home` sections.
        var roles: [Role: JSONValue] = [:]
        /// Every other section (`push`, and any this version does not know).
        var others: [String: JSONValue] = [:]

        /// The section `key`: a role's (`tunnel`, `home`) or another.
        subscript(key: String) -> JSONValue? {
            get { Role(rawValue: key).map { roles[$0] } ?? others[key] }
            set {
                if let role = Role(rawValue: key) { roles[role] = newValue } else { others[key] = newValue }
            }
        }

        var json: JSONValue {
            .object(others.merging(roles.map { ($0.key.rawValue, $0.value) }) { $1 })
        }
    }

    var profiles: [ProfileName: Profile]
    /// Every top-level key but `profiles`.
    var others: [String: JSONValue]
    /// Whether the file is the flat format from before profiles: it reads as the default
    /// profile's tunnel section, every key moved intact, and is written as this version's.
    let isLegacy: Bool

    /// A file with no profile yet.
    init() {
        (profiles, others, isLegacy) = ([:], [:], false)
    }

    /// The file `value` at `path`; a top level or `profiles` that is not an object, a profile
    /// that is not one or whose name octunnel does not accept, is refused (65).
    init(_ value: JSONValue, path: String) throws(OCTunnelError) {
        guard var top = value.members else {
            guard case .array = value else { throw .badConfig(path: path, reason: "not JSON") }  // as JSONSerialization: no bare value
            throw .badConfig(path: path, reason: "not a JSON object")
        }
        guard let listed = top.removeValue(forKey: "profiles") else {
            (profiles, others, isLegacy) = ([.default: Profile(roles: [.tunnel: value])], ["version": .integer(ConfigFile.version)], true)
            return
        }
        guard let listed = listed.members else { throw .badConfig(path: path, reason: "profiles is not an object") }
        var profiles: [ProfileName: Profile] = [:]
        for (name, sections) in listed {
            let shown = OutsideText.shown(name, limit: 64)  // the file's text, quoted in the message
            let profile: ProfileName
            do { profile = try ProfileName(name) } catch { throw .badConfig(path: path, reason: "profiles.\(shown): \(error.description)") }
            guard let sections = sections.members else { throw .badConfig(path: path, reason: "profiles.\(shown) is not an object") }
            var read = Profile()
            for (key, section) in sections { read[key] = section }
            profiles[profile] = read
        }
        (self.profiles, others, isLegacy) = (profiles, top, false)
    }

    /// The file as this version writes it (`version` 2 with its profiles).
    var json: JSONValue {
        var top = others
        top["profiles"] = .object(Dictionary(uniqueKeysWithValues: profiles.map { ($0.key.rawValue, $0.value.json) }))
        return .object(top)
    }
}
