import Foundation

/// The user's OpenSSH known_hosts files, read (never written) on first contact with a host
/// octunnel's own store does not know: a key ssh already verified is not trust on first use.
public struct OpenSSHKnownHosts: Sendable, Equatable {
    /// The files in the order ssh reads them (user files, then global ones).
    public var files: [String]
    /// `$HOME`, to show paths as `~/.ssh/known_hosts`.
    public var home: String
    /// HostKeyAlias from the ssh config: looked up as is, without the port (as ssh does).
    public var hostKeyAlias: String?

    /// Reads `files` (missing ones are skipped), showing paths under `home` as `~/…`.
    public init(files: [String], home: String, hostKeyAlias: String? = nil) {
        self.files = files
        self.home = home
        self.hostKeyAlias = hostKeyAlias
    }

    /// OpenSSH's defaults, or the files the ssh config names instead.
    public static func standard(home: String, resolution: SSHConfigResolution? = nil) -> OpenSSHKnownHosts {
        let user = resolution?.userKnownHostsFiles ?? [home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2"]
        let global = resolution?.globalKnownHostsFiles ?? ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]
        return OpenSSHKnownHosts(
            files: (user + global).filter { $0 != "/dev/null" && $0.lowercased() != "none" },
            home: home, hostKeyAlias: resolution?.hostKeyAlias)
    }

    /// Where a line is: the file as the user knows it (`~/.ssh/known_hosts`) and its number.
    public struct Place: Sendable, Equatable, CustomStringConvertible {
        public let file: String
        public let line: Int
        public var description: String { "\(file):\(line)" }
    }

    /// What the files say about a presented key.
    public enum Verdict: Sendable, Equatable {
        /// No line names this host with a key of this type.
        case notFound
        /// A line names the host with exactly this key.
        case verified(Place)
        /// A line names the host with another key of the same type: a changed key.
        case differs(Place, known: String)
        /// A `@revoked` line holds this key.
        case revoked(Place)
        /// No line holds a key of this type for the host, but lines hold keys of other types:
        /// where ssh asks before trusting the new key ("keys of different type are already known").
        case otherTypes([KnownKey])
    }

    /// A key the files hold for the host: where, its type and its fingerprint.
    public struct KnownKey: Sendable, Equatable, CustomStringConvertible {
        public let place: Place
        public let type: String
        public let fingerprint: String
        public var description: String { "\(type) \(fingerprint) (\(place))" }
    }

    /// The name ssh looks the host up under: HostKeyAlias, else `host` or `[host]:port`.
    public func lookupName(host: String, port: Int) -> String {
        hostKeyAlias?.lowercased() ?? HostPort(host: host, port: port).knownHostsName
    }

    /// Checks `key` for `host`:`port` as OpenSSH's check_host_key does: a revoked key wins,
    /// then a matching key, then a different key of the same type, then keys of other types. `notes` gets one line per
    /// `@cert-authority` line for the host (octunnel does not check certificates) and per
    /// unreadable file.
    public func verdict(host: String, port: Int, key: SSHPublicKey, notes: inout [String]) -> Verdict {
        let name = lookupName(host: host, port: port)
        var verified: Place?
        var differs: (Place, String)?
        var others: [KnownKey] = []
        for (path, file) in loaded(notes: &notes) {
            for (line, entry) in file.entries {
                let match = entry.match(name)
                guard match == .exact || match == .pattern else { continue }
                let place = Place(file: display(path), line: line)
                switch entry.marker {
                case .revoked?:
                    if entry.keyBlob == key.blob { return .revoked(place) }
                case .certAuthority?:
                    notes.append(
                        "\(place) is a @cert-authority line for \(name); octunnel does not check host certificates, skipped"
                    )
                case nil:
                    if entry.keyBlob == key.blob && entry.keyType == key.type {
                        if verified == nil { verified = place }
                    } else if entry.keyType == key.type {
                        if differs == nil { differs = (place, entry.fingerprint) }
                    } else {
                        others.append(KnownKey(place: place, type: entry.keyType, fingerprint: entry.fingerprint))
                    }
                }
            }
        }
        if let verified { return .verified(verified) }
        if let (place, known) = differs { return .differs(place, known: known) }
        return others.isEmpty ? .notFound : .otherTypes(others)
    }

    /// The key types the files hold for the host, in file order: what to ask the server for first.
    public func knownKeyTypes(host: String, port: Int) -> [String] {
        let name = lookupName(host: host, port: port)
        var ignored: [String] = []
        var types: [String] = []
        for (_, file) in loaded(notes: &ignored) {
            for (_, entry) in file.entries where entry.marker == nil && !types.contains(entry.keyType) {
                let match = entry.match(name)
                if match == .exact || match == .pattern { types.append(entry.keyType) }
            }
        }
        return types
    }

    private func loaded(notes: inout [String]) -> [(String, KnownHostsFile)] {
        var result: [(String, KnownHostsFile)] = []
        for path in files {
            do {
                guard let bytes = try FileBytes.read(path) else { continue }
                result.append((path, KnownHostsFile(bytes: bytes)))
            } catch {
                notes.append("cannot read \(display(path)) (\(error.description)); not consulted")
            }
        }
        return result
    }

    /// `~/…` for a path under the home directory.
    public func display(_ path: String) -> String {
        path.hasPrefix(home + "/") ? "~" + path.dropFirst(home.count) : path
    }
}
