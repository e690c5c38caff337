import Foundation

/// The user's own `ssh` client, run as `ssh [-F CONFIG] TARGET /bin/sh -s` with a program on
/// its standard input: how octunnel changes authorized_keys through the user's login (their
/// config, agent, keys, ProxyJump, password), never its own key. The one place besides
/// `ssh -G` where octunnel runs ssh. Prompts (a password, a new host key) reach the user's
/// terminal as ssh asks them, on /dev/tty; ssh's stderr is kept and shown only on failure.
public struct UserSSH: Sendable {
    /// The ssh client (the first `ssh` on `$PATH`); nil when there is none.
    public var sshPath: String?
    /// `-F PATH` when `$HOME` is not the passwd entry's home (`SSHConfigResolver.configArguments`).
    public var configArguments: [String]
    /// The environment ssh runs with (the agent's socket, `SSH_ASKPASS`, `DISPLAY`…).
    public var environment: [String: String]
    /// Seconds ssh may take, typing a password included.
    public var timeout: Double = 300

    /// ssh as this process would run it: `$PATH`, `$HOME` and its config.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let resolver = SSHConfigResolver(environment: environment)
        sshPath = resolver.sshPath
        configArguments = resolver.configArguments
        self.environment = resolver.environment
    }

    /// The words after `ssh` for `target` (`[user@]host[:port]`, IPv6 in brackets, or a Host of
    /// the config): the port becomes `-p`, since ssh's destination takes none; no pseudo-terminal,
    /// no X11 or agent forwarding, and none of the config's LocalForward/RemoteForward for the host
    /// (a running `tunnel up` may hold the same local port).
    public func arguments(target: String) throws -> [String] {
        var destination = target
        var port: [String] = []
        let at = target.unicodeScalars.lastIndex(of: "@")
        let user = at.map { String(target.unicodeScalars[..<$0]) + "@" } ?? ""
        let hostPart = at.map { String(target.unicodeScalars[target.unicodeScalars.index(after: $0)...]) } ?? target
        if hostPart.hasPrefix("[") || hostPart.contains(":") {
            do {
                let parsed = try HostPort.parse(hostPart, defaultPort: 0)
                destination = user + parsed.host
                if parsed.port != 0 { port = ["-p", String(parsed.port)] }
            } catch {
                throw SSHConfigError.badSSHConfig(path: target, reason: error.message)
            }
        }
        guard !destination.hasPrefix("-") else {
            throw SSHConfigError.badSSHConfig(path: target, reason: "a target cannot start with -")
        }
        return configArguments + port + [
            "-T", "-x", "-a", "-o", "ClearAllForwardings=yes", "--", destination, "/bin/sh -s",
        ]
    }

    /// Runs `program` with POSIX sh on the VPS as the user logs in there (`ssh TARGET /bin/sh -s`,
    /// the program on stdin) and returns what it printed (its first `outputLimit` bytes: 64 KiB
    /// unless the caller bounds the program's answer itself, as `keys list` does). ssh's own failure
    /// (exit 255: no login, no connection, host key refused) is `userSSHFailed` with ssh's words;
    /// the program's own exit status is left to its output (`AuthorizedKeysReport`).
    public func run(target: String, program: String, outputLimit: Int = 65536) throws -> String {
        guard let sshPath else {
            throw AuthorizedKeysError.userSSHFailed(
                target: target,
                detail:
                    "no ssh client on PATH: install OpenSSH's client, or add the line by hand (`octunnel pubkey --restrict`)"
            )
        }
        let words = try arguments(target: target)
        let result: ChildProcess.Result
        do {
            result = try ChildProcess.run(
                sshPath, words, environment: environment, timeout: timeout, input: Array(program.utf8),
                outputLimit: outputLimit)
        } catch {
            throw AuthorizedKeysError.userSSHFailed(
                target: target, detail: "cannot run \(sshPath): \(error.description)")
        }
        if result.timedOut {
            throw AuthorizedKeysError.userSSHFailed(
                target: target, detail: "ssh did not finish within \(Int(timeout)) s")
        }
        if result.status == 255 {
            throw AuthorizedKeysError.userSSHFailed(
                target: target, detail: Self.said(result.stderr) ?? "ssh exited with status 255")
        }
        return result.stdout
    }

    /// ssh's complaint, its last lines that say something (warnings about known hosts dropped),
    /// shown as outside text: it quotes the server and the config.
    static func said(_ stderr: String) -> String? {
        let lines = stderr.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("Warning: Permanently added") && !$0.hasPrefix("Pseudo-terminal") }
        guard !lines.isEmpty else { return nil }
        return OutsideText.shown(lines.suffix(3).joined(separator: "; "), limit: 512)
    }
}

extension UserSSH {
    /// Why `target` cannot be given to ssh, or nil (ssh would read a leading `-` as an option).
    public static func targetProblem(_ target: String) -> String? {
        if target.isEmpty { return "give the VPS as you log in there: [user@]host[:port] or a Host of ~/.ssh/config" }
        if target.hasPrefix("-") {
            return "bad target \"\(OutsideText.shown(target, limit: 100))\": a target cannot start with -"
        }
        if target.contains(where: { $0.isWhitespace || $0.isNewline })
            || target.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        {
            return "bad target \"\(OutsideText.shown(target, limit: 100))\": it contains a space or a control character"
        }
        return nil
    }
}
