import Foundation

/// The service managers octunnel writes a start-at-login file for.
public enum ServiceFormat: String, CaseIterable, Sendable {
    /// A systemd user unit.
    case systemd
    /// A launchd LaunchAgent.
    case launchd

    /// This platform's own: launchd on macOS, systemd elsewhere.
    public static var native: ServiceFormat {
        #if os(macOS)
        return .launchd
        #else
        return .systemd
        #endif
    }
}

/// One start-at-login service: which role and profile it runs, with which binary and home,
/// where its file goes and what it says.
public struct ServiceDefinition: Sendable {
    public let role: Role
    public let profile: ProfileName
    public let format: ServiceFormat
    /// This binary's absolute path.
    public let executable: String
    /// octunnel's home, passed as `--home` so the service reads the same files whatever its environment.
    public let octunnelHome: String
    /// The user's home directory (`$HOME`).
    public let userHome: String
    /// `$XDG_CONFIG_HOME`, when set: systemd user units live under it.
    public let xdgConfigHome: String?

    public init(role: Role, profile: ProfileName, format: ServiceFormat, executable: String, octunnelHome: String,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.role = role
        self.profile = profile
        self.format = format
        self.executable = executable
        self.octunnelHome = octunnelHome
        userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        xdgConfigHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
    }

    /// Refuses a definition whose paths (the binary, `--home` or `$OCTUNNEL_HOME`, the user's
    /// home) hold a control character: each format escapes what it can, but a path with a line
    /// break is a mistake or an attack, never a directory a service should run in.
    public func validate() throws(OCTunnelError) {
        for (what, path) in [("octunnel's home", octunnelHome), ("the octunnel binary's path", executable), ("$HOME", userHome)]
        where UserPath.hasControlCharacters(path) {
            throw .controlCharactersInPath(what: what, path: path)
        }
    }

    /// `tunnel`, `tunnel-work`, `home`, …: the stem of every name below.
    public var instanceName: String { role.instanceName(profile: profile) }

    /// The systemd unit name (`octunnel-tunnel.service`) or the launchd label (`dev.octunnel.tunnel`).
    public var name: String {
        switch format {
        case .systemd: return "octunnel-\(instanceName).service"
        case .launchd: return "dev.octunnel.\(instanceName)"
        }
    }

    /// The directory the file goes in.
    public var directory: String {
        switch format {
        case .systemd: return (xdgConfigHome ?? userHome + "/.config") + "/systemd/user"
        case .launchd: return userHome + "/Library/LaunchAgents"
        }
    }

    /// Where the file goes.
    public var path: String {
        switch format {
        case .systemd: return directory + "/" + name
        case .launchd: return directory + "/" + name + ".plist"
        }
    }

    /// Where a LaunchAgent's output goes (systemd has the journal).
    public var logDirectory: String { userHome + "/Library/Logs/octunnel" }
    public var logPath: String { logDirectory + "/\(instanceName).log" }

    /// What the service runs: `octunnel tunnel up --home DIR --profile NAME` (or `home up`).
    public var arguments: [String] {
        [executable] + role.upCommand + ["--home", octunnelHome, "--profile", profile.rawValue]
    }

    /// The file's text, marked as written by octunnel (the mark after its comments).
    public func render() -> String {
        switch format {
        case .systemd: return ServiceFileMark.seal(SystemdUnit(service: loginService).lines, at: 3, prefix: "# ", suffix: "")
        case .launchd: return ServiceFileMark.seal(LaunchAgent(service: loginService).lines, at: 4, prefix: "<!-- ", suffix: " -->")
        }
    }

    /// What runs at login, for either renderer.
    var loginService: LoginService {
        switch format {
        case .systemd:
            return LoginService(label: name, summary: summary, arguments: arguments, comments: [
                header,
                "octunnel never overwrites or removes this file once it is changed (unless given --force);",
                "add settings such as Environment= with `systemctl --user edit \(name)` instead.",
            ], notRetried: ExitStatus.notRetriedByServices)
        case .launchd:
            return LoginService(label: name, summary: summary, arguments: arguments, comments: [
                commentSafeHeader, "octunnel never overwrites or removes this file once it is changed, unless forced.",
            ], logPath: logPath)
        }
    }

    /// The sentence the file's header starts with, naming the command that removes it.
    var header: String {
        let option = profile.isDefault ? "" : " --profile \(profile)"
        return "Written by `octunnel service install \(role)\(option)`; `octunnel service uninstall \(role)\(option)` removes it."
    }

    /// The header without `--` (not allowed in an XML comment).
    var commentSafeHeader: String {
        "Written by `octunnel service install \(role)` for profile \(profile); `octunnel service uninstall \(role)` removes it."
    }

    var summary: String {
        let what = role == .tunnel ? "the tunnel to the VPS" : "the home machine's reverse tunnel from the VPS"
        return "octunnel: \(what) (profile \(profile))"
    }
}

/// This binary's absolute path, as the user reached it: a symlink such as Homebrew's
/// `bin/octunnel` is kept, so a service outlives upgrades.
public enum ExecutablePath {
    /// `argument0` made absolute (searched on `PATH` when it has no `/`), else the running image.
    public static func resolve(argument0: String = CommandLine.arguments.first ?? "",
                               environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if argument0.contains("/") {
            let absolute = argument0.hasPrefix("/") ? argument0 : FileManager.default.currentDirectoryPath + "/" + argument0
            return (absolute as NSString).standardizingPath
        }
        if !argument0.isEmpty, let found = ToolLocator.find(argument0, environment: environment) { return found }
        return Bundle.main.executablePath ?? argument0
    }
}

/// Finds programs on `PATH`, as a shell does.
public enum ToolLocator {
    /// The first executable `name` in `$PATH`, or nil.
    public static func find(_ name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where directory.hasPrefix("/") {
            let candidate = directory + "/" + name
            if let info = try? Syscall.fileStatus(candidate), info.kind == .regular, Syscall.isExecutable(candidate) { return candidate }
        }
        return nil
    }
}
