import Foundation

/// Where a target really goes once the user's OpenSSH client config has had its say.
public struct SSHConfigResolution: Sendable, Equatable {
    /// How the config was read.
    public enum Source: Sendable, Equatable {
        /// `ssh -G` applied every rule, as ssh itself would.
        case ssh
        /// The ssh client is not installed: the file was read for the plain cases.
        case file(String)
        /// No config file, and no ssh to ask.
        case none
    }

    /// The host, user and port to connect to (HostName, User, Port applied).
    public var target: SSHTarget
    /// The first IdentityFile the config sets for this host that exists and is a key type
    /// octunnel signs with (Ed25519), expanded; nil when there is none. Callers use it only
    /// when no key was chosen otherwise (`--identity`, an agent).
    public var identityFile: String?
    /// IdentityFiles the config sets that were passed over (missing, or RSA, ECDSA, PEM…), as
    /// "PATH (why)": ssh would skip them too and try the next key.
    public var skippedIdentities: [String] = []
    /// HostKeyAlias: the name ssh looks host keys up under instead of the host.
    public var hostKeyAlias: String?
    /// UserKnownHostsFile / GlobalKnownHostsFile when the config changes them; nil: OpenSSH's defaults.
    public var userKnownHostsFiles: [String]?
    public var globalKnownHostsFiles: [String]?
    /// StrictHostKeyChecking as the config sets it for this host; nil when it says nothing (ssh's `ask`).
    public var strictHostKeyChecking: StrictHostKeyChecking?
    /// Directives that applied to this host but that octunnel did not use (reading the file only).
    public var ignored: [String]
    public var source: Source
    /// Whether the config changed anything about the target (host, user, port or key).
    public var changedTarget: Bool
}

/// Resolves a `[user@]host[:port]` target through `~/.ssh/config` (HostName, User, Port,
/// IdentityFile), asking `ssh -G` when the client is installed. A user or port written in the
/// target wins over the config, as on ssh's command line. ProxyJump / ProxyCommand are refused
/// (exit 78): octunnel never silently connects directly instead.
public struct SSHConfigResolver: Sendable {
    /// `$HOME`: where `~/.ssh` is.
    public var home: String
    /// The ssh client, nil to read the file without it.
    public var sshPath: String?
    /// The local login name (ssh's default User, `%u`).
    public var localUser: String
    /// The environment ssh runs with.
    public var environment: [String: String]

    /// The resolver for this process: `$HOME`, the login name, and the ssh found on `$PATH`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        self.home = home
        self.environment = environment
        localUser = currentUserName()
        sshPath = Self.findExecutable("ssh", path: environment["PATH"] ?? "/usr/bin:/bin")
    }

    /// A resolver with everything given (tests, or a caller that knows better).
    public init(
        home: String, sshPath: String?, localUser: String = currentUserName(), environment: [String: String] = [:]
    ) {
        self.home = home
        self.sshPath = sshPath
        self.localUser = localUser
        var environment = environment
        environment["HOME"] = home
        if environment["PATH"] == nil { environment["PATH"] = "/usr/bin:/bin" }
        self.environment = environment
    }

    /// `~/.ssh/config` under `home`.
    public var userConfigPath: String { home + "/.ssh/config" }

    /// Resolves `text`, `[user@]host[:port]` as the command line gives it.
    public func resolve(_ text: String) throws -> SSHConfigResolution {
        let parsed: SSHTarget
        let explicitPort: Int
        do {
            parsed = try SSHTarget.parse(text, defaultUser: localUser)
            let hostPart =
                text.unicodeScalars.lastIndex(of: "@").map {
                    String(text.unicodeScalars[text.unicodeScalars.index(after: $0)...])
                } ?? text
            explicitPort = try HostPort.parse(hostPart, defaultPort: 0).port
        } catch {
            throw SSHConfigError.badSSHConfig(path: text, reason: error.message)
        }
        let explicitUser = text.unicodeScalars.contains("@") ? parsed.user : nil
        let port = explicitPort == 0 ? nil : explicitPort
        if let sshPath {
            return try resolveWithSSH(sshPath, host: parsed.host, user: explicitUser, port: port)
        }
        return try resolveFromFile(host: parsed.host, user: explicitUser, port: port)
    }

    // MARK: ssh -G

    private func resolveWithSSH(_ ssh: String, host: String, user: String?, port: Int?) throws -> SSHConfigResolution {
        var common: [String] = ["-G"]
        if let user { common += ["-l", user] }
        if let port { common += ["-p", String(port)] }
        let config = configArguments
        let applied = try runSSHG(ssh, config + common + ["--", host], host: host)
        let defaults = try runSSHG(ssh, ["-F", "/dev/null"] + common + ["--", host], host: host)
        try refuseProxies(
            applied.first, host: host,
            file: config.last.map(displayPath) ?? "your ssh config (~/.ssh/config or /etc/ssh/ssh_config)")

        let finalHost = applied.first["hostname"] ?? host
        let finalUser = applied.first["user"] ?? user ?? localUser
        let finalPort = applied.first["port"].flatMap(Int.init) ?? port ?? 22
        let target = try validatedTarget(user: finalUser, host: finalHost, port: finalPort, file: "ssh -G \(host)")
        var identity: String?
        var skipped: [String] = []
        let identities = applied.all["identityfile"] ?? []
        if identities != (defaults.all["identityfile"] ?? []) {
            (identity, skipped) = pickIdentity(identities, target: target, original: host)
        }
        let userFiles =
            applied.first["userknownhostsfile"] != defaults.first["userknownhostsfile"]
            ? applied.first["userknownhostsfile"].map(splitFiles) : nil
        let globalFiles =
            applied.first["globalknownhostsfile"] != defaults.first["globalknownhostsfile"]
            ? applied.first["globalknownhostsfile"].map(splitFiles) : nil
        let changed =
            finalHost != (defaults.first["hostname"] ?? host) || finalUser != (defaults.first["user"] ?? localUser)
            || finalPort != (defaults.first["port"].flatMap(Int.init) ?? 22) || identity != nil
        let alias = applied.first["hostkeyalias"].flatMap { $0 == "none" ? nil : $0 }
        return SSHConfigResolution(
            target: target, identityFile: identity, skippedIdentities: skipped, hostKeyAlias: alias,
            userKnownHostsFiles: userFiles, globalKnownHostsFiles: globalFiles,
            strictHostKeyChecking: applied.first["stricthostkeychecking"].flatMap(
                StrictHostKeyChecking.init(configValue:)),
            ignored: [], source: .ssh, changedTarget: changed)
    }

    /// The arguments that point ssh at the config this resolver reads: none when `$HOME` is the
    /// passwd entry's home (ssh reads its ~/.ssh/config itself), else `-F $HOME/.ssh/config`
    /// (`-F /dev/null` when there is none): ssh reads the passwd entry's ~/.ssh/config, not $HOME's.
    public var configArguments: [String] {
        guard Self.passwdHome().map({ realpath($0) }) != realpath(home) else { return [] }
        return ["-F", FileBytes.exists(userConfigPath) ? userConfigPath : "/dev/null"]
    }

    private struct SSHGOutput {
        var first: [String: String] = [:]
        var all: [String: [String]] = [:]
    }

    private func runSSHG(_ ssh: String, _ arguments: [String], host: String) throws -> SSHGOutput {
        let result: ChildProcess.Result
        do {
            result = try ChildProcess.run(ssh, arguments, environment: environment)
        } catch {
            throw SSHConfigError.badSSHConfig(
                path: userConfigPath, reason: "cannot run \(ssh) -G: \(error.description)")
        }
        guard result.status == 0 else {
            let reason =
                result.stderr.split(separator: "\n").map(String.init)
                .first(where: { !$0.hasPrefix("Pseudo-terminal") }) ?? "ssh -G exited with status \(result.status)"
            // ssh quotes the config in its complaints: its words are outside text here.
            throw SSHConfigError.badSSHConfig(
                path: userConfigPath, reason: "`ssh -G \(host)` failed: \(OutsideText.shown(reason, limit: 512))")
        }
        var output = SSHGOutput()
        for line in result.stdout.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            let key = String(line[..<space]).lowercased()
            let value = String(line[line.index(after: space)...])
            if output.first[key] == nil { output.first[key] = value }
            output.all[key, default: []].append(value)
        }
        return output
    }

    // MARK: reading the file

    private func resolveFromFile(host: String, user: String?, port: Int?) throws -> SSHConfigResolution {
        let bytes: [UInt8]?
        do { bytes = try FileBytes.read(userConfigPath) } catch {
            throw LocalFileError.cannotRead(path: userConfigPath, reason: error.description)
        }
        guard let bytes else {
            return SSHConfigResolution(
                target: SSHTarget(user: user ?? localUser, host: host, port: port ?? 22), identityFile: nil,
                hostKeyAlias: nil, userKnownHostsFiles: nil, globalKnownHostsFiles: nil, ignored: [],
                source: .none, changedTarget: false)
        }
        let settings = SSHConfigFile(text: String(decoding: bytes, as: UTF8.self)).settings(for: host)
        try refuseProxies(settings.values, host: host, file: displayPath(userConfigPath))
        let hostName =
            settings.values["hostname"].map { expandTokens($0, host: host, remoteUser: nil, port: nil, hostName: host) }
            ?? host
        let configPort: Int?
        if let text = settings.values["port"] {
            guard let value = try? HostPort.parsePort(text) else {
                throw SSHConfigError.badSSHConfig(
                    path: userConfigPath,
                    reason: "Port \(OutsideText.shown(text, limit: 64)) for \(host) is not a port number")
            }
            configPort = value
        } else {
            configPort = nil
        }
        let target = try validatedTarget(
            user: user ?? settings.values["user"] ?? localUser, host: hostName,
            port: port ?? configPort ?? 22, file: displayPath(userConfigPath))
        let (identity, skipped) = pickIdentity(settings.identityFiles, target: target, original: host)
        let changed =
            hostName != host || (user == nil && settings.values["user"] != nil) || (port == nil && configPort != nil)
            || identity != nil
        return SSHConfigResolution(
            target: target, identityFile: identity, skippedIdentities: skipped,
            hostKeyAlias: settings.values["hostkeyalias"].flatMap { $0 == "none" ? nil : $0 },
            userKnownHostsFiles: settings.values["userknownhostsfile"].map(splitFiles),
            globalKnownHostsFiles: settings.values["globalknownhostsfile"].map(splitFiles),
            strictHostKeyChecking: settings.values["stricthostkeychecking"].flatMap(
                StrictHostKeyChecking.init(configValue:)),
            ignored: settings.ignored, source: .file(userConfigPath), changedTarget: changed)
    }

    // MARK: shared

    private func refuseProxies(_ values: [String: String], host: String, file: String) throws {
        for keyword in ["proxyjump", "proxycommand"] {
            if let value = values[keyword], value.lowercased() != "none" {
                let name = keyword == "proxyjump" ? "ProxyJump" : "ProxyCommand"
                // The value is the config's text (or ssh -G's), quoted in the message.
                throw SSHConfigError.unsupportedSSHConfig(
                    host: host, directive: name, value: OutsideText.shown(value, limit: 256), file: file)
            }
        }
    }

    private func validatedTarget(user: String, host: String, port: Int, file: String) throws -> SSHTarget {
        do {
            try HostPort.validateHost(host)
            _ = try SSHTarget.parse("\(user)@x", defaultUser: user)
        } catch {
            throw SSHConfigError.badSSHConfig(path: file, reason: error.message)
        }
        guard (1...65535).contains(port) else {
            throw SSHConfigError.badSSHConfig(path: file, reason: "port \(port) is out of range")
        }
        return SSHTarget(user: user, host: host, port: port)
    }

    /// The first identity, expanded, that exists and holds a key type octunnel signs with; the
    /// ones passed over before it (or all, when none fits) with the reason.
    private func pickIdentity(_ files: [String], target: SSHTarget, original: String) -> (String?, [String]) {
        var skipped: [String] = []
        for file in files {
            let path = expandTokens(
                file, host: original, remoteUser: target.user, port: target.port, hostName: target.host)
            // Listed in a note: the path is the config's text, shown as outside text.
            let shown = OutsideText.shown(displayPath(path), limit: 256)
            guard FileBytes.exists(path) else { skipped.append("\(shown) (missing)"); continue }
            // An unreadable file is not skipped: loading it says precisely why it cannot be used.
            guard let type = IdentityKeyType.of(path: path), !IdentityKeyType.usable.contains(type) else {
                return (path, skipped)
            }
            skipped.append("\(shown) (\(type == "PEM" ? "a PEM key" : OutsideText.shown(type, limit: 64)))")
        }
        return (nil, skipped)
    }

    /// `~`, `%d`, `%u`, `%h`, `%n`, `%r`, `%p`, `%%` as ssh_config(5)'s TOKENS; others are kept as written.
    func expandTokens(_ text: String, host: String, remoteUser: String?, port: Int?, hostName: String) -> String {
        var text = text
        if text == "~" { text = home } else if text.hasPrefix("~/") { text = home + text.dropFirst() }
        var out = ""
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "%", let token = iterator.next() else { out.append(character); continue }
            switch token {
            case "%": out += "%"
            case "d": out += home
            case "u": out += localUser
            case "h": out += hostName
            case "n": out += host
            case "r" where remoteUser != nil: out += remoteUser!
            case "p" where port != nil: out += String(port!)
            default: out += "%\(token)"
            }
        }
        return out
    }

    private func splitFiles(_ text: String) -> [String] {
        text.split(separator: " ").map { expandTokens(String($0), host: "", remoteUser: nil, port: nil, hostName: "") }
    }

    /// `~/…` for paths under `$HOME`, for messages.
    public func displayPath(_ path: String) -> String {
        path.hasPrefix(home + "/") ? "~" + path.dropFirst(home.count) : path
    }

    /// The home directory of the passwd entry, the one ssh uses for `~`.
    static func passwdHome() -> String? {
        Syscall.passwordEntry?.home
    }

    private func realpath(_ path: String) -> String {
        (path as NSString).resolvingSymlinksInPath
    }

    /// The first executable `name` in a PATH string.
    static func findExecutable(_ name: String, path: String) -> String? {
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if Syscall.isExecutable(candidate) { return candidate }
        }
        return nil
    }
}
