import Foundation

/// `octunnel authorize --account NAME`: through a root login (`UserSSH`), a dedicated account
/// for octunnel's keys and the sshd drop-in that closes, for that account only, what no key line
/// can (`AccountDropIn`), checked with `sshd -t` and `sshd -T` before sshd is reloaded
/// (`AccountScript`); then the key's line in the account's authorized_keys and its proof, signed
/// in as the account, as a plain `authorize` does (`KeyAuthorization`).
public struct AccountAuthorization: Sendable {
    /// The plain authorization, for the account's file; its `target` is the root login.
    public let keys: KeyAuthorization
    public let dropIn: AccountDropIn
    /// The sshd binary on the VPS (`sshd -t`, `sshd -T`).
    public let sshd: String

    /// The default sshd binary.
    public static let standardSSHD = "/usr/sbin/sshd"

    public init(keys: KeyAuthorization, dropIn: AccountDropIn, sshd: String = standardSSHD) {
        self.keys = keys
        self.dropIn = dropIn
        self.sshd = sshd
    }

    /// Sets up the account and its drop-in, installs `key`'s line for `role` there and, with
    /// `check` (signing in as the account), proves it.
    public func authorize(
        key: SSHPublicKey, keyPath: String, role: Role, ends: [HostPort], check: KeyCheck?,
        say: (String) -> Void = { _ in }
    ) throws -> KeyAuthorization.Outcome {
        let line = KeyAuthorization.line(for: key, role: role, ends: ends, file: keys.file)
        let install = AuthorizedKeysScript.install(line: line, file: keys.file, sshdConfig: keys.sshdConfig)
        let program = AccountScript.program(dropIn, config: keys.sshdConfig, sshd: sshd, install: install)
        let output = try keys.ssh.run(target: keys.target, program: program)
        guard let report = AccountScript.Report.parse(output) else {
            throw AuthorizedKeysError.vpsAnswerUnreadable(target: keys.target, detail: KeyAuthorization.shown(output))
        }
        try refuseUnlessReady(report)
        let name = dropIn.account
        say(
            report.made
                ? "Created the account \(name) on \(keys.target): no password, its own home, /bin/sh."
                : "The account \(name) exists on \(keys.target); it was left as it was.")
        let file = AccountDropIn.directory(forConfig: keys.sshdConfig) + "/" + dropIn.fileName
        say(
            "sshd on \(keys.target) refuses \(name) Unix-socket, agent and X11 forwarding, a terminal and ~/.ssh/rc (\(file), "
                + "\(report.dropIn == "same" ? "already so" : "written"), "
                + "checked with sshd -t and sshd -T); \(Self.reloadWords(report.reload))")
        if let check { Self.waitForSSHD(check, keyPath: keyPath) }
        return try keys.installed(
            output, line: line, key: key, keyPath: keyPath, role: role, ends: ends, check: check, say: say)
    }

    /// The program's refusals and failures as errors, each with its fix.
    private func refuseUnlessReady(_ report: AccountScript.Report) throws {
        let name = dropIn.account
        let config = keys.sshdConfig
        switch (report.result, report.reason ?? "") {
        case (.ready, _): return
        case (.refused, "notroot"):
            throw AuthorizedKeysError.accountNeedsRoot(
                target: keys.target, account: name, advice: AccountDropIn.advice(user: name))
        case (.refused, "nosshd"):
            throw AuthorizedKeysError.accountNotSetUp(
                target: keys.target, account: name,
                reason: "\(sshd) or \(config) is not there (name them with --sshd and --sshd-config)")
        case (.refused, "sshdt"):
            throw AuthorizedKeysError.accountNotSetUp(
                target: keys.target, account: name,
                reason: "`sshd -t` refused the configuration with the drop-in (\(report.said ?? "it said nothing")), "
                    + "so it was taken out again")
        case (.refused, "notapplied"):
            let include = "Include \(AccountDropIn.directory(forConfig: config))/*.conf"
            throw AuthorizedKeysError.accountNotSetUp(
                target: keys.target, account: name,
                reason: "`sshd -T` shows the drop-in's settings not applied to \(name): \(config) has no `\(include)` "
                    + "before its other lines, or an earlier line wins; add `\(include)` at its top")
        case (_, let reason):
            throw AuthorizedKeysError.accountNotSetUp(
                target: keys.target, account: name, reason: "the step \(reason.isEmpty ? "?" : reason) failed")
        }
    }

    /// How sshd was told of the drop-in, said plainly.
    static func reloadWords(_ reload: String?) -> String {
        switch reload {
        case "pid": return "sshd was reloaded (SIGHUP to the pid in its PidFile)."
        case "systemctl": return "sshd was reloaded (systemctl reload)."
        default:
            return
                "sshd could NOT be reloaded (no running sshd found by its PidFile, no systemctl): it applies the drop-in only once "
                + "reloaded: run `systemctl reload ssh` (or `kill -HUP` sshd's pid) there."
        }
    }

    /// After a reload, sshd re-executes and listens again: a refused connection is waited out
    /// (a few seconds at most) before the proof, which would take it for a dead VPS.
    private static func waitForSSHD(_ check: KeyCheck, keyPath: String) {
        let deadline = MonotonicClock.now() + 10
        while MonotonicClock.now() < deadline {
            do {
                try check.session(keyPath: keyPath).close()
                return
            } catch {
                guard case ConnectError.connectionRefused = error else { return }
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
    }
}
