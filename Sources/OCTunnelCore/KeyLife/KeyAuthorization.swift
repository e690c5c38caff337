import Foundation

/// `octunnel authorize`: octunnel's least-privilege line for this key put into the VPS's
/// authorized_keys through the user's own login (`UserSSH`), by a program that creates
/// `~/.ssh` and the file with the modes sshd wants, adds the line once (the same key already
/// there is a no-op that says so), writes atomically and leaves every other line byte for byte
/// (`AuthorizedKeysScript.install`); then the key itself proves the line does its job
/// (`KeyCheck.prove`): the tunnel's forward opens, or the home's listen is granted.
public struct KeyAuthorization: Sendable {
    public let ssh: UserSSH
    /// The VPS as the user logs in there (`you@vps`, a Host of their ssh config).
    public let target: String
    /// Where sshd reads authorized_keys on the VPS (relative: to the VPS user's home).
    public let file: String
    /// sshd's configuration on the VPS, read there to check that its AuthorizedKeysFile names `file`.
    public let sshdConfig: String

    public init(ssh: UserSSH, target: String, file: String, sshdConfig: String = AuthorizedKeysScript.sshdConfig) {
        (self.ssh, self.target, self.file, self.sshdConfig) = (ssh, target, file, sshdConfig)
    }

    /// How it went.
    public struct Outcome: Sendable {
        /// The line as installed (or found).
        public let line: String
        /// False: the same key's line was there already; nothing was written.
        public let added: Bool
        /// What the key proved, or nil when it was not asked.
        public let proof: String?
    }

    /// The line `role` needs for `key`, with `ends` (the tunnel's forwards' VPS ends, or the
    /// home's listens, OpenCode's first), dated `added` (UTC).
    public static func line(
        for key: SSHPublicKey, role: Role, ends: [HostPort], file: String, added: Date = Date()
    ) -> String {
        let day = OctunnelKeyLine.today(added)
        switch role {
        case .tunnel: return restrictedAuthorizedKeysLine(key, targets: ends, added: day, file: file)
        case .home: return listenAuthorizedKeysLine(key, listens: ends, added: day, file: file)
        }
    }

    /// Installs `key`'s line for `role` and, with `check`, proves it by signing in with
    /// `keyPath` and asking for each of the line's ends.
    public func authorize(
        key: SSHPublicKey, keyPath: String, role: Role, ends: [HostPort], check: KeyCheck?,
        say: (String) -> Void = { _ in }
    ) throws -> Outcome {
        let line = Self.line(for: key, role: role, ends: ends, file: file)
        let output = try ssh.run(
            target: target, program: AuthorizedKeysScript.install(line: line, file: file, sshdConfig: sshdConfig))
        return try installed(
            output, line: line, key: key, keyPath: keyPath, role: role, ends: ends, check: check, say: say)
    }

    /// What the install program printed in `output` (its report), then the proof, as `authorize`.
    func installed(
        _ output: String, line: String, key: SSHPublicKey, keyPath: String, role: Role, ends: [HostPort],
        check: KeyCheck?,
        say: (String) -> Void
    ) throws -> Outcome {
        guard let report = AuthorizedKeysReport.parse(output) else {
            throw AuthorizedKeysError.vpsAnswerUnreadable(target: target, detail: Self.shown(output))
        }
        let added: Bool
        switch report.result {
        case .added: added = true
        case .present: added = false
        default:
            throw AuthorizedKeysError.authorizedKeysRefused(
                target: target, file: file, reason: Self.refusal(report, file: file))
        }
        if report.modesFixed {
            say("Made the home directory, ~/.ssh and \(file) on \(target) writable by you only, as sshd requires.")
        }
        say(
            added
                ? "Added the \(role == .tunnel ? "laptop" : "home") line for \(key.fingerprint) to \(file) on \(target)."
                : "\(file) on \(target) already has a line for \(key.fingerprint); "
                    + "nothing was changed (`octunnel keys list \(target)` shows whether it is octunnel's).")
        guard let check, !ends.isEmpty else { return Outcome(line: line, added: added, proof: nil) }
        switch try check.prove(keyPath: keyPath, role: role, ends: ends) {
        case .works(let words):
            return Outcome(line: line, added: added, proof: words)
        case .refused(let why):
            // The key's line was there before: it may be for other forwards, or not octunnel's.
            let stale =
                added
                ? ""
                : "; the line already there for this key is not " + "this one (other forwards, or an older line): "
                    + "replace it with `octunnel keys revoke \(key.fingerprint) \(target)`, then authorize again"
            throw AuthorizedKeysError.keyLineDoesNotWork(
                fingerprint: key.fingerprint, target: target, reason: why + stale)
        }
    }

    /// Why the VPS left the file as it was, and the fix where octunnel knows one.
    static func refusal(_ report: AuthorizedKeysReport, file: String) -> String {
        switch (report.result, report.reason ?? "") {
        case (.refused, "elsewhere"):
            guard let first = report.files?.split(separator: ",").first else { return report.summary }
            return report.summary + "; run again with --file \(first)"
        case (.refused, "owner"):
            return report.summary + "; on the VPS, make it yours: `sudo chown $USER: \(file)`"
        case (.refused, "symlink"), (.refused, "notfile"):
            return report.summary
                + "; octunnel edits only a regular file of your own: replace it with one (`ls -l \(file)` on the VPS)"
        case (.failed, _):
            return report.summary
                + "; check that you own and may write \(file) and its directory on the VPS (`ls -ld \(file) $(dirname \(file))`)"
        default:
            return report.summary
        }
    }

    /// The VPS's words, short and safe to print.
    static func shown(_ output: String) -> String {
        let trimmed = output.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "it printed nothing" : "it printed \"\(OutsideText.shown(trimmed, limit: 200))\""
    }
}
