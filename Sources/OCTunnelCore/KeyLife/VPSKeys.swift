import Foundation

/// `octunnel keys list` and `keys revoke`: octunnel's lines in the VPS's authorized_keys, read
/// and removed through the user's own login (`UserSSH`), by the programs of
/// `AuthorizedKeysScript`; every other line is left byte for byte.
public struct VPSKeys: Sendable {
    public let ssh: UserSSH
    public let target: String
    public let file: String

    public init(ssh: UserSSH, target: String, file: String) {
        self.ssh = ssh
        self.target = target
        self.file = file
    }

    /// octunnel's lines, in the file's order.
    public func list() throws(OCTunnelError) -> [OctunnelKeyLine] {
        let output = try ssh.run(target: target, program: AuthorizedKeysScript.list(file: file))
        return try Self.lines(output, target: target, file: file)
    }

    /// What a revoke did.
    public enum Revoked: Sendable {
        /// The line was removed (its comment, for the message).
        case revoked(OctunnelKeyLine)
        /// No octunnel line of that fingerprint; nothing changed.
        case absent
    }

    /// Removes octunnel's line whose key has `fingerprint` (`SHA256:…`).
    public func revoke(fingerprint: String) throws(OCTunnelError) -> Revoked {
        guard let line = try list().first(where: { $0.key.fingerprint == fingerprint }) else { return .absent }
        let output = try ssh.run(target: target, program: AuthorizedKeysScript.revoke(keyBlob: Data(line.key.blob).base64EncodedString(), file: file))
        guard let report = AuthorizedKeysReport.parse(output) else {
            throw .vpsAnswerUnreadable(target: target, detail: KeyAuthorization.shown(output))
        }
        switch report.result {
        case .revoked: return .revoked(line)
        case .absent: return .absent
        default: throw .authorizedKeysRefused(target: target, file: file, reason: KeyAuthorization.refusal(report, file: file))
        }
    }

    /// The listing's octunnel lines (`absent`: no file, none); anything but a listing is an error.
    static func lines(_ output: String, target: String, file: String) throws(OCTunnelError) -> [OctunnelKeyLine] {
        guard let report = AuthorizedKeysReport.parse(output) else {
            throw .vpsAnswerUnreadable(target: target, detail: KeyAuthorization.shown(output))
        }
        switch report.result {
        case .listed: return AuthorizedKeysScript.listedLines(in: output)
        case .absent: return []
        default: throw .authorizedKeysRefused(target: target, file: file, reason: KeyAuthorization.refusal(report, file: file))
        }
    }
}

extension VPSKeys {
    /// One line of `keys list`: role, the forwards or listens, fingerprint, device (the comment,
    /// shown as outside text: the VPS's file wrote it) and the day it was added.
    public static func row(_ line: OctunnelKeyLine) -> String {
        let role = line.role == .home ? "home  " : "laptop"
        let ends = line.ends.map(\.description).joined(separator: ",")
        let added = line.added.map { " added \($0)" } ?? ""
        let comment = line.comment.isEmpty ? "-" : OutsideText.shown(line.comment, limit: 100)
        return "\(role) \(ends) \(line.key.fingerprint) \(comment)\(added)"
    }
}
