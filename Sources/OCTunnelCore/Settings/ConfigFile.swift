import Foundation

/// `config.json`, the saved settings of every profile (0600, written atomically under a lock):
///
///     {"version": 2, "profiles": {"default": {"tunnel": {…}, "home": {…}}, "work": {…}}}
///
/// A file from before profiles (one flat tunnel object) reads as the default profile's tunnel
/// section, and is converted, every key kept, the first time anything is saved (until then the
/// version that wrote it still reads it). A section saved before `forwardList` is written back
/// in this version's shape the first time it is read (`load`), its old keys kept as the copy
/// older versions read; `forwardList` is the list a person edits, and a copy that says something
/// else is rewritten from it, with one warning. Keys this version does not know are kept on every
/// write, and every key in its place (`ConfigDocument`, `JSONObject`).
public struct ConfigFile: Sendable {
    public static let version = 2
    /// A settings file is a few hundred bytes; a larger one than this is refused, not read.
    static let sizeLimit = 1 << 20

    public let directory: OctunnelDirectory

    public init(directory: OctunnelDirectory) { self.directory = directory }

    public var path: String { directory.configPath }

    /// The file's profiles, as read; nil when there is no file.
    public func read() throws -> Contents? {
        let bytes: [UInt8]?
        do { bytes = try FileBytes.read(path, limit: Self.sizeLimit) } catch {
            throw LocalFileError.cannotRead(path: path, reason: error.description)
        }
        guard let bytes else { return nil }
        return try Contents(bytes: bytes, path: path)
    }

    /// The file's profiles, as `read`; when it holds a section in the shape of an older
    /// version (no `forwardList`) or a copy of the list that says something else (`warn`ed
    /// once per such key: `ForwardListMismatch`), the file is written back in this version's
    /// shape first, if it can be: a file that cannot be written (a read-only directory, a home
    /// open to others or not the user's) is only read, and written back next time.
    public func load(warn: (String) -> Void = ConfigFile.toStandardError) throws -> Contents? {
        guard let contents = try read() else { return nil }
        let stale = contents.staleCopies()
        if contents.inCurrentShape() != nil { try? writeBack() }
        stale.forEach(warn)
        return contents
    }

    /// Where `load` says its warnings by default.
    public static func toStandardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Writes the file, as it is when the lock is held, back in this version's shape; only in
    /// a home that is the user's alone (reading never tightens a home, nor writes in another's).
    private func writeBack() throws {
        guard let info = try? Syscall.fileStatus(directory.path), info.kind == .directory, info.isOwnedByMe,
            info.permissions & 0o077 == 0
        else { return }
        try FileLock.withLock(directory.configPath + ".lock") {
            guard let document = try read()?.inCurrentShape() else { return }
            try write(document)
        }
    }

    /// `document` as the file's text, atomically replacing it (0600); the caller holds the lock.
    private func write(_ document: ConfigDocument) throws {
        guard let text = JSONText.pretty(document.json) else {
            throw LocalFileError.cannotWrite(path: path, reason: "a value JSON cannot hold")
        }
        try AtomicFile.write(Array((text + "\n").utf8), to: path, mode: 0o600)
    }

    /// Replaces `role`'s section of `profile` with `section`, keeping everything else.
    func save<Section: Encodable>(_ section: Section, role: Role, profile: ProfileName) throws {
        try save(section, key: role.rawValue, profile: profile)
    }

    /// Replaces the section `key` of `profile` (a role's, or `push`) with `section`, keeping everything else.
    func save<Section: Encodable>(_ section: Section, key: String, profile: ProfileName) throws {
        try directory.prepare()
        let encoded: JSONValue
        do {
            encoded = try JSONValue(encoding: section)
        } catch {
            throw LocalFileError.cannotWrite(path: path, reason: "\(error)")
        }
        do {
            try FileLock.withLock(directory.configPath + ".lock") {
                var document = try read()?.document ?? ConfigDocument()
                document[profile, key] = encoded
                document.top["version"] = .integer(Self.version)
                try write(document)
            }
        } catch let error as any OCTunnelFailure {
            throw error
        } catch let error as SystemError {
            throw LocalFileError.cannotWrite(path: path, reason: error.description)
        } catch {
            throw LocalFileError.cannotWrite(path: path, reason: "\(error)")
        }
    }

    /// A parsed `config.json`: its profiles, each section decoded only when asked for.
    public struct Contents {
        /// The whole file (a flat file from before profiles as `profiles.default.tunnel`).
        let document: ConfigDocument
        let path: String

        /// Whether the file is the flat format from before profiles.
        public var isLegacy: Bool { document.isLegacy }

        init(bytes: [UInt8], path: String) throws {
            self.path = path
            guard let value = try? JSONValue.parse(Data(bytes)) else {
                throw LocalFileError.badConfig(path: path, reason: "not JSON")
            }
            document = try ConfigDocument(value, path: path)
        }

        /// The names of the profiles in the file.
        public var profiles: [ProfileName] { document.profiles }

        /// The section `key` of `profile` as the file holds it (`push`: Push/PushSettings decodes it).
        func section(_ key: String, of profile: ProfileName) -> JSONValue? {
            document[profile, key]
        }

        /// `profile`'s sections, decoded and checked; nil when the file does not have it.
        public func settings(of profile: ProfileName) throws -> SavedSettings? {
            guard profiles.contains(profile) else { return nil }
            let prefix = isLegacy ? "" : "profiles.\(profile.rawValue)."
            var settings = SavedSettings()
            if let tunnel = document[profile, .tunnel] {
                let decoded = try decode(TunnelSettings.self, from: tunnel, at: isLegacy ? "" : prefix + "tunnel.")
                do { try decoded.validate() } catch {
                    throw LocalFileError.badConfig(path: path, reason: error.message)
                }
                settings.tunnel = decoded
            }
            if let home = document[profile, .home] {
                let decoded = try decode(HomeSettings.self, from: home, at: prefix + "home.")
                do { try decoded.validate() } catch {
                    throw LocalFileError.badConfig(path: path, reason: error.message)
                }
                settings.home = decoded
            }
            return settings.tunnel == nil && settings.home == nil ? nil : settings
        }

        /// The warning for each valid section whose copy for older versions says something
        /// else than its `forwardList` (nothing for a copy removed by hand).
        func staleCopies() -> [String] {
            var lines: [String] = []
            for profile in profiles.sorted() {
                guard let settings = try? settings(of: profile) else { continue }
                let prefix = isLegacy ? "" : "profiles.\(profile.rawValue)."
                let found = [
                    (Role.tunnel, Self.staleCopy(in: document[profile, .tunnel], of: settings.tunnel?.forwards)),
                    (Role.home, Self.staleCopy(in: document[profile, .home], of: settings.home?.forwards)),
                ]
                for case let (role, mismatch?) in found {
                    lines.append(mismatch.warning(path: path, at: isLegacy ? "" : prefix + role.rawValue + "."))
                }
            }
            return lines
        }

        /// Where `section`'s copy of its `forwardList` first differs from `forwards` (the list
        /// as read); nil without a list or when the copy is right or gone.
        private static func staleCopy(in section: JSONValue?, of forwards: [Forward]?) -> ForwardListMismatch? {
            guard let section, section.members?["forwardList"] != nil, let forwards,
                let saved = try? section.decoded(as: OldForwardKeys.Saved.self)
            else { return nil }
            return saved.mismatch(with: forwards)
        }

        /// The file in this version's shape, every section saved before `forwardList` (or whose
        /// copy says something else than its list) written anew over its old keys (which stay,
        /// as the copy older versions read; every other key kept); nil when there is
        /// nothing to write back: every section has its list, the file
        /// is from before profiles (converted by the next save, as the version that wrote it
        /// reads only that shape), or a section is not valid (a file that is refused is never
        /// rewritten).
        func inCurrentShape() -> ConfigDocument? {
            guard !isLegacy else { return nil }
            var document = self.document
            var changed = false
            for profile in profiles {
                let found: SavedSettings?
                do { found = try settings(of: profile) } catch { return nil }
                // A profile with neither role's section (only a `push`) has nothing to rewrite.
                guard let settings = found else { continue }
                do {
                    for (role, written) in [
                        (Role.tunnel, try Self.written(settings.tunnel, over: document[profile, .tunnel])),
                        (Role.home, try Self.written(settings.home, over: document[profile, .home])),
                    ] {
                        guard let written else { continue }
                        document[profile, role] = written
                        changed = true
                    }
                } catch {
                    return nil
                }
            }
            guard changed else { return nil }
            document.top["version"] = .integer(ConfigFile.version)
            return document
        }

        /// `section` as this version writes it, laid over `old` (whose other keys stay, the old
        /// copy's replaced); nil when there is no section or `old` has its `forwardList` already
        /// with a right copy or none. Throws when the result would not read back as `section`.
        private static func written<Section: SavedConnection & Codable & Equatable>(
            _ section: Section?,
            over old: JSONValue?
        ) throws -> JSONValue? {
            guard let section, let old, var fields = old.members,
                fields["forwardList"] == nil || staleCopy(in: old, of: section.forwards) != nil
            else { return nil }
            guard let encoded = try JSONValue(encoding: section).members else { throw CocoaError(.coderInvalidValue) }
            for key in OldForwardKeys.Key.allCases where encoded[key.rawValue] == nil { fields[key.rawValue] = nil }
            let written = JSONValue.object(fields.merging(encoded))
            guard try written.decoded(as: Section.self) == section else { throw CocoaError(.coderInvalidValue) }
            return written
        }

        private func decode<T: Decodable>(_ type: T.Type, from section: JSONValue, at prefix: String) throws -> T {
            guard section.members != nil else {
                throw LocalFileError.badConfig(path: path, reason: "\(prefix.dropLast()) is not an object")
            }
            do {
                return try section.decoded(as: type)
            } catch DecodingError.keyNotFound(let key, _) {
                throw LocalFileError.badConfig(path: path, reason: "\"\(prefix)\(key.stringValue)\" is missing")
            } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
                throw LocalFileError.badConfig(
                    path: path,
                    reason:
                        "\(prefix)\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type")
            } catch let error as TargetParseError {
                throw LocalFileError.badConfig(path: path, reason: error.message)
            } catch {
                throw LocalFileError.badConfig(path: path, reason: "\(prefix.dropLast()) is not valid")
            }
        }
    }
}
