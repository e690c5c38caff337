import Foundation

/// The VPSes octunnel's own key was authorized for (issue 55, finding 8): `authorize` records the
/// target as `tunnel up` resolves it (`ROLE user@host:port`, one a line, in `authorized-targets` of
/// octunnel's directory) once the key has proved its line. For such a target and role octunnel's key
/// is signed in with before the ssh config's IdentityFile: the least-privilege line just installed is
/// the one used, `keygen --rotate --install` rotates the key the tunnel signs in with, and a resumed
/// rotation resolves the same key. `--identity` and `--agent` still win: they are asked for by name.
/// A line ends in ` closed` when `authorize --account` also closed, for that account, what no key
/// line can (`AccountDropIn`); `tunnel check` names what is open otherwise.
public struct AuthorizedTargets: Sendable {
    public let directory: OctunnelDirectory

    public init(directory: OctunnelDirectory) { self.directory = directory }

    /// The record's file.
    public var path: String { directory.path + "/authorized-targets" }

    /// Whether octunnel's key was authorized for `target` in `role`; an unreadable record is no record.
    public func contains(_ target: SSHTarget, role: Role) -> Bool {
        entry(target, role: role) != nil
    }

    /// Whether sshd was told, for `target`'s account, to refuse what no key line can (`authorize --account`).
    public func isClosed(_ target: SSHTarget, role: Role) -> Bool {
        entry(target, role: role)?.hasSuffix(" closed") == true
    }

    /// Records that octunnel's key is authorized for `target` in `role`, `closed` or not (the
    /// target's older line replaced; the other lines kept).
    public func add(_ target: SSHTarget, role: Role, closed: Bool = false) throws {
        let key = Self.line(target, role: role)
        let line = key + (closed ? " closed" : "")
        let current = lines()
        guard !current.contains(line) else { return }
        let text = (current.filter { $0 != key && $0 != key + " closed" } + [line]).joined(separator: "\n") + "\n"
        do {
            try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600)
        } catch {
            throw LocalFileError.cannotWrite(path: path, reason: error.description)
        }
    }

    /// One record line.
    static func line(_ target: SSHTarget, role: Role) -> String {
        "\(role.rawValue) \(target.description)"
    }

    private func entry(_ target: SSHTarget, role: Role) -> String? {
        let key = Self.line(target, role: role)
        return lines().last { $0 == key || $0 == key + " closed" }
    }

    private func lines() -> [String] {
        guard let bytes = try? FileBytes.read(path, limit: 1 << 20) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
