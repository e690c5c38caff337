import Foundation

/// The trust-on-first-use store: an OpenSSH-format known_hosts file keyed strictly by host:port.
public struct KnownHostsStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    var lockPath: String { path + ".lock" }

    /// What the store says about a presented host key.
    public enum Verdict: Equatable, Sendable {
        case unknown
        case trusted
        case changed(known: [String])
        case revoked
    }

    /// Reads the file (an absent file is empty). Never modifies it.
    public func load() throws -> KnownHostsFile {
        do {
            return KnownHostsFile(bytes: try FileBytes.read(path) ?? [])
        } catch {
            throw LocalFileError.cannotRead(path: path, reason: error.description)
        }
    }

    /// One warning for all unreadable lines, or nil; they are kept as they are.
    public static func warning(for file: KnownHostsFile, path: String) -> String? {
        let bad = file.malformed
        guard let first = bad.first else { return nil }
        let count = bad.count == 1 ? "line \(first.line) is" : "\(bad.count) lines are"
        return "warning: \(path): \(count) not readable (line \(first.line): \(first.reason)); kept as they are"
    }

    /// Looks up `key` for `host`:`port`. Another key type on file counts as changed.
    public func verdict(host: String, port: Int, key: SSHPublicKey) throws -> Verdict {
        Self.verdict(in: try load(), name: HostPort(host: host, port: port).knownHostsName, key: key)
    }

    static func verdict(in file: KnownHostsFile, name: String, key: SSHPublicKey) -> Verdict {
        var known: [String] = []
        var trusted = false
        for (_, entry) in file.entries {
            let match = entry.match(name)
            guard match == .exact || match == .pattern else { continue }
            switch entry.marker {
            case .revoked?:
                if entry.keyBlob == key.blob { return .revoked }
            case .certAuthority?:
                continue
            case nil:
                if entry.keyBlob == key.blob && entry.keyType == key.type {
                    trusted = true
                } else {
                    known.append(entry.fingerprint)
                }
            }
        }
        if trusted { return .trusted }
        return known.isEmpty ? .unknown : .changed(known: known)
    }

    /// The key types on file for `host`:`port` (plain entries), to ask the server for those first.
    public func knownKeyTypes(host: String, port: Int) -> [String] {
        let name = HostPort(host: host, port: port).knownHostsName
        guard let file = try? load() else { return [] }
        var types: [String] = []
        for (_, entry) in file.entries where entry.marker == nil && !types.contains(entry.keyType) {
            let match = entry.match(name)
            if match == .exact || match == .pattern { types.append(entry.keyType) }
        }
        return types
    }

    /// Records a newly trusted key under the lock; a no-op when another process just did.
    public func record(host: String, port: Int, key: SSHPublicKey) throws {
        let name = HostPort(host: host, port: port).knownHostsName
        try locked { () throws in
            var file = try load()
            switch Self.verdict(in: file, name: name, key: key) {
            case .trusted: return
            case .changed, .revoked:
                throw LocalFileError.cannotWrite(
                    path: path, reason: "another key for \(name) was recorded meanwhile; connect again")
            case .unknown: break
            }
            file.append(name: name, key: SSHPublicKey(type: key.type, blob: key.blob))
            try save(file)
        }
    }

    /// Removes the entries for exactly `host`:`port`, under the lock.
    public func remove(host: String, port: Int) throws -> KnownHostsFile.Removal {
        let name = HostPort(host: host, port: port).knownHostsName
        // No file, nothing to remove: do not create a lock file (or need the home to exist).
        guard FileBytes.exists(path) else { return KnownHostsFile.Removal() }
        return try locked { () throws -> KnownHostsFile.Removal in
            var file = try load()
            let removal = file.remove(name: name)
            if removal.removed > 0 { try save(file) }
            return removal
        }
    }

    private func save(_ file: KnownHostsFile) throws {
        let target = try writeTarget()
        do {
            try AtomicFile.write(file.bytes, to: target, mode: 0o600)
        } catch {
            throw LocalFileError.cannotWrite(path: target, reason: error.description)
        }
    }

    /// Where a save goes: the file itself, or, when it is a symbolic link (dotfiles kept in a
    /// repository), the file it leads to, so the link stays a link. `load` already refused
    /// anything but a regular file.
    private func writeTarget() throws -> String {
        guard let target = FileBytes.symlinkTarget(path) else { return path }
        guard target.hasPrefix("/"), FileBytes.exists(target) else {
            throw LocalFileError.cannotWrite(
                path: path, reason: "it is a symbolic link to a missing file; it was left as it is")
        }
        return target
    }

    private func locked<T>(_ body: () throws -> T) throws -> T {
        let lock = try FileLock.forChange(lockPath)
        defer { lock.release() }
        return try body()
    }
}
