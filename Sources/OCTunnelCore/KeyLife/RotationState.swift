import Foundation

/// A key rotation under way (`keygen --rotate --install`), written before the VPS is asked
/// anything and removed only once the old key is refused: while it exists the new pair is
/// `id_ed25519.next` (or already the current key), nothing deletes it, and running the rotation
/// again finishes this one. A small JSON file beside the key, 0600, written atomically.
public struct RotationState: Codable, Equatable, Sendable {
    public var version = 1
    /// The key being replaced, and its successor (SHA256 fingerprints).
    public var old: String
    public var new: String
    /// The VPS as the rotation was asked for (`[user@]host[:port]` or an ssh config Host).
    public var target: String
    /// Whose line it is: the laptop's (`tunnel`) or the home's (`home`).
    public var role: Role
    /// What the new key proves it may do (`KeyCheck.prove`), as `HostPort` writes it: the
    /// tunnel's forward's VPS end or the home's listen, as the first run was asked for.
    public var end: String
    /// When it started (UTC, ISO 8601).
    public var started: String

    public init(old: String, new: String, target: String, role: Role, end: HostPort, started: Date = Date()) {
        self.old = old
        self.new = new
        self.target = target
        self.role = role
        self.end = end.description
        let formatter = ISO8601DateFormatter()
        self.started = formatter.string(from: started)
    }

    /// `end` parsed; nil if the file was edited into something else.
    public var endHostPort: HostPort? { try? HostPort.parse(end) }

    /// The pending rotation of `store`, nil when none is.
    public static func load(_ store: KeyStore) throws -> RotationState? {
        let path = store.rotationStatePath
        let bytes: [UInt8]?
        do { bytes = try FileBytes.read(path, limit: 64 * 1024) } catch {
            throw LocalFileError.cannotRead(path: path, reason: error.description)
        }
        guard let bytes else { return nil }
        do {
            return try JSONDecoder().decode(RotationState.self, from: Data(bytes))
        } catch {
            throw LocalFileError.badConfig(
                path: path,
                reason:
                    "not a rotation state octunnel wrote (\(error.localizedDescription)); the keys beside it are untouched"
            )
        }
    }

    /// Writes it (0600, atomically).
    func save(_ store: KeyStore) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes: [UInt8]
        do { bytes = Array(try encoder.encode(self)) + [0x0a] } catch {
            throw LocalFileError.cannotWrite(path: store.rotationStatePath, reason: "\(error)")
        }
        do {
            try AtomicFile.write(bytes, to: store.rotationStatePath, mode: 0o600)
        } catch {
            throw LocalFileError.cannotWrite(path: store.rotationStatePath, reason: error.description)
        }
    }

    /// The rotation is over.
    static func remove(_ store: KeyStore) throws {
        do {
            try Syscall.removeFile(store.rotationStatePath)
            try AtomicFile.syncDirectory(of: store.rotationStatePath)
        } catch {
            throw LocalFileError.cannotWrite(path: store.rotationStatePath, reason: error.description)
        }
    }
}
