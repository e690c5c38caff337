import Foundation

/// The VPSes octunnel's own key was authorized for (issue 55, finding 8): `authorize` records the
/// target as `tunnel up` resolves it (`ROLE user@host:port`, one a line, in `authorized-targets` of
/// octunnel's directory) once the key has proved its line. For such a target and role octunnel's key
/// is signed in with before the ssh config's IdentityFile: the least-privilege line just installed is
/// the one used, `keygen --rotate --install` rotates the key the tunnel signs in with, and a resumed
/// rotation resolves the same key. `--identity` and `--agent` still win: they are asked for by name.
public struct AuthorizedTargets: Sendable {
    public let directory: OctunnelDirectory

    public init(directory: OctunnelDirectory) { self.directory = directory }

    /// The record's file.
    public var path: String { directory.path + "/authorized-targets" }

    /// Whether octunnel's key was authorized for `target` in `role`; an unreadable record is no record.
    public func contains(_ target: SSHTarget, role: Role) -> Bool {
        lines().contains(Self.line(target, role: role))
    }

    /// Records that octunnel's key is authorized for `target` in `role` (once; the other lines kept).
    public func add(_ target: SSHTarget, role: Role) throws(OCTunnelError) {
        let line = Self.line(target, role: role)
        let current = lines()
        guard !current.contains(line) else { return }
        let text = (current + [line]).joined(separator: "\n") + "\n"
        do {
            try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600)
        } catch {
            throw .cannotWrite(path: path, reason: error.description)
        }
    }

    /// One record line.
    static func line(_ target: SSHTarget, role: Role) -> String {
        "\(role.rawValue) \(target.description)"
    }

    private func lines() -> [String] {
        guard let bytes = try? FileBytes.read(path, limit: 1 << 20) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
