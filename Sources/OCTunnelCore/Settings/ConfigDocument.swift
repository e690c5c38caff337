/// `config.json` as octunnel reads it: its profiles by name, each with a section per role and
/// any other (`push`, or one a newer version wrote), and the file's other keys (`version`, and
/// any this version does not know). A section is decoded only when asked for (`ConfigFile.Contents`);
/// the file is kept whole as read (`JSONValue`, every key in its place), so a write gives back
/// whatever it did not change, where it was.
struct ConfigDocument: Equatable {
    /// The whole file (a flat file from before profiles as `profiles.default.tunnel`).
    var top: JSONObject
    /// Whether the file is the flat format from before profiles: it reads as the default
    /// profile's tunnel section, every key moved intact, and is written as this version's.
    let isLegacy: Bool

    /// A file with no profile yet.
    init() {
        (top, isLegacy) = (["version": .integer(ConfigFile.version), "profiles": .object([:])], false)
    }

    /// The file `value` at `path`; a top level or `profiles` that is not an object, a profile
    /// that is not one or whose name octunnel does not accept, is refused (65).
    init(_ value: JSONValue, path: String) throws {
        guard let top = value.members else {
            // as JSONSerialization: no bare value
            guard case .array = value else { throw LocalFileError.badConfig(path: path, reason: "not JSON") }
            throw LocalFileError.badConfig(path: path, reason: "not a JSON object")
        }
        guard let listed = top["profiles"] else {
            let profiles: JSONObject = [ProfileName.default.rawValue: .object([Role.tunnel.rawValue: value])]
            (self.top, isLegacy) = (["version": .integer(ConfigFile.version), "profiles": .object(profiles)], true)
            return
        }
        guard let listed = listed.members else {
            throw LocalFileError.badConfig(path: path, reason: "profiles is not an object")
        }
        for (name, sections) in listed.members {
            let shown = OutsideText.shown(name, limit: 64) // the file's text, quoted in the message
            do { _ = try ProfileName(name) } catch {
                throw LocalFileError.badConfig(path: path, reason: "profiles.\(shown): \(error.description)")
            }
            guard sections.members != nil else {
                throw LocalFileError.badConfig(path: path, reason: "profiles.\(shown) is not an object")
            }
        }
        (self.top, isLegacy) = (top, false)
    }

    /// The names of the profiles in the file, in its order.
    var profiles: [ProfileName] { profileSections.keys.compactMap { try? ProfileName($0) } }

    private var profileSections: JSONObject { top["profiles"]?.members ?? [:] }

    /// The section `key` of `profile` (a role's, `push`, or another), as the file holds it;
    /// setting one makes the profile when it has none.
    subscript(profile: ProfileName, key: String) -> JSONValue? {
        get { profileSections[profile.rawValue]?.members?[key] }
        set {
            var profiles = profileSections
            var sections = profiles[profile.rawValue]?.members ?? [:]
            sections[key] = newValue
            profiles[profile.rawValue] = .object(sections)
            top["profiles"] = .object(profiles)
        }
    }

    /// The section of `role` in `profile`.
    subscript(profile: ProfileName, role: Role) -> JSONValue? {
        get { self[profile, role.rawValue] }
        set { self[profile, role.rawValue] = newValue }
    }

    /// The file as this version writes it.
    var json: JSONValue { .object(top) }
}
