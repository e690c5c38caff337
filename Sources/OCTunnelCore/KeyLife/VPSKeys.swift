import Foundation

/// `octunnel keys list` and `keys revoke`: octunnel's lines in the VPS's authorized_keys, read
/// and removed through the user's own login (`UserSSH`), by the programs of
/// `AuthorizedKeysScript`; every other line is left byte for byte.
public struct VPSKeys: Sendable {
    public let ssh: UserSSH
    public let target: String
    public let file: String

    public init(ssh: UserSSH, target: String, file: String) {
        (self.ssh, self.target, self.file) = (ssh, target, file)
    }

    /// The most a listing (or a revoke's report) can print: `AuthorizedKeysScript.listLimit` lines of
    /// at most `OctunnelKeyLine.longestLine` bytes, each after its prefix, and the report: the
    /// bound of `keys list`, not ssh's usual 64 KiB.
    static let outputLimit =
        AuthorizedKeysScript.listLimit
        * (AuthorizedKeysScript.listedPrefix.utf8.count + OctunnelKeyLine.longestLine + 1) + 4096

    /// octunnel's lines, in the file's order.
    public func list() throws -> [OctunnelKeyLine] {
        let output = try ssh.run(
            target: target, program: AuthorizedKeysScript.list(file: file), outputLimit: Self.outputLimit)
        return try Self.lines(output, target: target, file: file)
    }

    /// What a revoke did: the lines it removed (the key's and its lineage's, in the file's
    /// order; none when no octunnel line carried the key) and the lines it left that carry the
    /// key but are not octunnel's (the user's own: theirs to remove): `N` a line of the file,
    /// `PATH:N` one of another file sshd may read keys from (shown as outside text).
    public struct Revoked: Sendable {
        public let removed: [OctunnelKeyLine]
        public let left: [String]
    }

    /// Removes octunnel's line whose key has `fingerprint` (`SHA256:…`) and its whole lineage
    /// (`AuthorizedKeysScript.revoke`): also when the key's own line is gone already and only
    /// its successors are left.
    public func revoke(fingerprint: String) throws -> Revoked {
        guard let tag = OctunnelKeyLine.tag(fingerprint: fingerprint) else {
            throw AuthorizedKeysError.authorizedKeysRefused(
                target: target, file: file, reason: "\(fingerprint) is not a SHA256 fingerprint")
        }
        let blob = try list().first(where: { $0.key.fingerprint == fingerprint }).map {
            Data($0.key.blob).base64EncodedString()
        }
        let output = try ssh.run(
            target: target, program: AuthorizedKeysScript.revoke(tag: tag, keyBlob: blob, file: file),
            outputLimit: Self.outputLimit)
        guard let report = AuthorizedKeysReport.parse(output) else {
            throw AuthorizedKeysError.vpsAnswerUnreadable(target: target, detail: KeyAuthorization.shown(output))
        }
        switch report.result {
        case .revoked, .absent:
            let removed =
                report.result == .revoked
                ? Self.prefixed(output, AuthorizedKeysScript.removedPrefix).compactMap(OctunnelKeyLine.parse) : []
            return Revoked(
                removed: removed,
                left: Self.prefixed(output, AuthorizedKeysScript.leftPrefix).map { OutsideText.shown($0, limit: 300) })
        default:
            throw AuthorizedKeysError.authorizedKeysRefused(
                target: target, file: file, reason: KeyAuthorization.refusal(report, file: file))
        }
    }

    /// The lines of `output` after `prefix`, without it (a CR before the newline dropped), at most `listLimit`.
    static func prefixed(_ output: String, _ prefix: String) -> [String] {
        var found: [String] = []
        for line in output.split(separator: "\n", omittingEmptySubsequences: true)
        where found.count < AuthorizedKeysScript.listLimit {
            guard line.hasPrefix(prefix) else { continue }
            var text = String(line.dropFirst(prefix.count))
            if text.hasSuffix("\r") { text.removeLast() }
            found.append(text)
        }
        return found
    }

    /// The listing's octunnel lines (`absent`: no file, none); anything but a listing is an error.
    static func lines(_ output: String, target: String, file: String) throws -> [OctunnelKeyLine] {
        guard let report = AuthorizedKeysReport.parse(output) else {
            throw AuthorizedKeysError.vpsAnswerUnreadable(target: target, detail: KeyAuthorization.shown(output))
        }
        switch report.result {
        case .listed: return AuthorizedKeysScript.listedLines(in: output)
        case .absent: return []
        default:
            throw AuthorizedKeysError.authorizedKeysRefused(
                target: target, file: file, reason: KeyAuthorization.refusal(report, file: file))
        }
    }
}

extension VPSKeys {
    /// One line of `keys list`: role, the forwards or listens, fingerprint, device (the comment,
    /// shown as outside text: the VPS's file wrote it), the day it was added and its lineage:
    /// a successor whose predecessor is still in `lines` is `pending on` that key; one whose
    /// predecessor is gone says `from` its tag.
    public static func row(_ line: OctunnelKeyLine, in lines: [OctunnelKeyLine] = []) -> String {
        let role = line.role == .home ? "home  " : "laptop"
        let ends = line.ends.map(\.description).joined(separator: ",")
        let added = line.added.map { " added \($0)" } ?? ""
        let comment = line.comment.isEmpty ? "-" : OutsideText.shown(line.comment, limit: 100)
        var lineage = ""
        if let predecessor = line.predecessor {
            if let pending = lines.first(where: { $0.tag == predecessor }) {
                lineage = " PENDING successor of \(pending.key.fingerprint)"
            } else {
                lineage = " from \(predecessor)"
            }
        }
        return "\(role) \(ends) \(line.key.fingerprint) \(comment)\(added)\(lineage)"
    }
}
