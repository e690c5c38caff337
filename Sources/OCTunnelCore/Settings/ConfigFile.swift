import Foundation

/// `config.json`, the saved settings of every profile (0600, written atomically under a lock):
///
///     {"version": 2, "profiles": {"default": {"tunnel": {…}, "home": {…}}, "work": {…}}}
///
/// A file from before profiles (one flat tunnel object) reads as the default profile's tunnel
/// section, and is converted, every key kept, the first time anything is saved.
/// Keys this version does not know are kept on every write.
public struct ConfigFile: Sendable {
    public static let version = 2
    /// A settings file is a few hundred bytes; a larger one than this is refused, not read.
    static let sizeLimit = 1 << 20

    public let home: OctunnelDirectory

    public init(home: OctunnelDirectory) { self.home = home }

    public var path: String { home.configPath }

    /// The file's profiles, as read; nil when there is no file.
    public func read() throws(OCTunnelError) -> Contents? {
        let bytes: [UInt8]?
        do { bytes = try FileBytes.read(path, limit: Self.sizeLimit) } catch { throw .cannotRead(path: path, reason: error.description) }
        guard let bytes else { return nil }
        return try Contents(bytes: bytes, path: path)
    }

    /// Replaces `role`'s section of `profile` with `section`, keeping everything else.
    func save<Section: Encodable>(_ section: Section, role: Role, profile: ProfileName) throws(OCTunnelError) {
        try home.prepare()
        let encoded: Any
        do {
            encoded = try Self.object(section)
        } catch {
            throw .cannotWrite(path: path, reason: "\(error)")
        }
        do {
            try FileLock.withLock(home.configPath + ".lock") {
                var raw = try read()?.raw ?? ["version": Self.version, "profiles": [String: Any]()]
                var profiles = raw["profiles"] as? [String: Any] ?? [:]
                var sections = profiles[profile.rawValue] as? [String: Any] ?? [:]
                sections[role.rawValue] = encoded
                profiles[profile.rawValue] = sections
                raw["profiles"] = profiles
                raw["version"] = Self.version
                guard let text = JSONText.pretty(raw) else { throw OCTunnelError.cannotWrite(path: path, reason: "a value JSON cannot hold") }
                try AtomicFile.write(Array((text + "\n").utf8), to: path, mode: 0o600)
            }
        } catch let error as OCTunnelError {
            throw error
        } catch let error as SystemError {
            throw .cannotWrite(path: path, reason: error.description)
        } catch {
            throw .cannotWrite(path: path, reason: "\(error)")
        }
    }

    /// `section` as `config.json` holds it: the one encoder of saved settings (`save` writes
    /// what it makes, `config show` shows it).
    static func object<Section: Encodable>(_ section: Section) throws -> Any {
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(section))
    }

    /// A parsed `config.json`: its profiles, each section decoded only when asked for.
    public struct Contents {
        /// The whole file as a version-2 object (a flat file from before profiles moved, intact,
        /// to `profiles.default.tunnel`).
        let raw: [String: Any]
        let path: String
        /// Whether the file is the flat format from before profiles.
        public let isLegacy: Bool

        init(bytes: [UInt8], path: String) throws(OCTunnelError) {
            self.path = path
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) else {
                throw .badConfig(path: path, reason: "not JSON")
            }
            guard var top = object as? [String: Any] else { throw .badConfig(path: path, reason: "not a JSON object") }
            if let profiles = top["profiles"] {
                guard let profiles = profiles as? [String: Any] else { throw .badConfig(path: path, reason: "profiles is not an object") }
                for (name, sections) in profiles {
                    let shown = OutsideText.shown(name, limit: 64)  // the file's text, quoted in the message
                    do { _ = try ProfileName(name) } catch { throw .badConfig(path: path, reason: "profiles.\(shown): \(error.description)") }
                    guard sections is [String: Any] else { throw .badConfig(path: path, reason: "profiles.\(shown) is not an object") }
                }
                isLegacy = false
            } else {
                top = ["version": ConfigFile.version, "profiles": [ProfileName.default.rawValue: [Role.tunnel.rawValue: top]]]
                isLegacy = true
            }
            raw = top
        }

        /// The names of the profiles in the file.
        public var profiles: [ProfileName] {
            (raw["profiles"] as? [String: Any] ?? [:]).keys.compactMap { try? ProfileName($0) }
        }

        /// `profile`'s sections, decoded and checked; nil when the file does not have it.
        public func settings(of profile: ProfileName) throws(OCTunnelError) -> SavedSettings? {
            guard let sections = (raw["profiles"] as? [String: Any])?[profile.rawValue] as? [String: Any] else { return nil }
            let prefix = isLegacy ? "" : "profiles.\(profile.rawValue)."
            var settings = SavedSettings()
            if let tunnel = sections[Role.tunnel.rawValue] {
                let decoded = try decode(TunnelSettings.self, from: tunnel, at: isLegacy ? "" : prefix + "tunnel.")
                do { try decoded.validate() } catch { throw .badConfig(path: path, reason: error.message) }
                settings.tunnel = decoded
            }
            if let home = sections[Role.home.rawValue] {
                let decoded = try decode(HomeSettings.self, from: home, at: prefix + "home.")
                do { try decoded.validate() } catch { throw .badConfig(path: path, reason: error.message) }
                settings.home = decoded
            }
            return settings.tunnel == nil && settings.home == nil ? nil : settings
        }

        private func decode<T: Decodable>(_ type: T.Type, from section: Any, at prefix: String) throws(OCTunnelError) -> T {
            guard section is [String: Any], let data = try? JSONSerialization.data(withJSONObject: section) else {
                throw .badConfig(path: path, reason: "\(prefix.dropLast()) is not an object")
            }
            do {
                return try JSONDecoder().decode(type, from: data)
            } catch DecodingError.keyNotFound(let key, _) {
                throw .badConfig(path: path, reason: "\"\(prefix)\(key.stringValue)\" is missing")
            } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
                throw .badConfig(path: path, reason: "\(prefix)\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type")
            } catch {
                throw .badConfig(path: path, reason: "\(prefix.dropLast()) is not valid")
            }
        }
    }
}
