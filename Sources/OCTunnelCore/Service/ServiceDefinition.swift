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

/// What a service file runs for a role: its `up`, kept running from login on; or, with
/// `service install --rotate-every DAYS`, its key's rotation (`keygen --rotate --install
/// --if-older-than DAYS`), run once a day and rotating only once the key is that old, whose
/// systemd timer is a file of its own.
public enum ServiceJob: Sendable, Equatable {
    case up
    case rotation(everyDays: Int)
    /// systemd only: the timer that starts `rotation` daily.
    case rotationTimer(everyDays: Int)
}

/// One start-at-login service: which role and profile it runs, with which binary and home,
/// where its file goes and what it says.
public struct ServiceDefinition: Sendable {
    public let role: Role
    /// What the file runs (`up` unless this is a rotation's file).
    public private(set) var job: ServiceJob = .up
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

    public init(
        role: Role, profile: ProfileName, format: ServiceFormat, executable: String, octunnelHome: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
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
    public func validate() throws {
        for (what, path) in [
            ("octunnel's home", octunnelHome), ("the octunnel binary's path", executable), ("$HOME", userHome),
        ]
        where UserPath.hasControlCharacters(path) {
            throw ServiceError.controlCharactersInPath(what: what, path: path)
        }
    }

    /// The same service's file for `job` (the rotation and its timer beside the `up`).
    public func with(job: ServiceJob) -> ServiceDefinition {
        var copy = self
        copy.job = job
        return copy
    }

    /// The rotation's files for `service install --rotate-every days`: its one-shot unit and
    /// timer (systemd), or its LaunchAgent (launchd).
    public func rotation(everyDays days: Int) -> [ServiceDefinition] {
        format == .systemd
            ? [with(job: .rotation(everyDays: days)), with(job: .rotationTimer(everyDays: days))]
            : [with(job: .rotation(everyDays: days))]
    }

    /// `tunnel`, `tunnel-work`, `home`, …: the stem of every name below (`tunnel-rotate` for a rotation's files).
    public var instanceName: String { role.instanceName(profile: profile) + (job == .up ? "" : "-rotate") }

    /// The systemd unit name (`octunnel-tunnel.service`, `octunnel-tunnel-rotate.timer`) or the
    /// launchd label (`dev.octunnel.tunnel`).
    public var name: String {
        switch format {
        case .systemd:
            if case .rotationTimer = job { return "octunnel-\(instanceName).timer" }
            return "octunnel-\(instanceName).service"
        case .launchd: return "dev.octunnel.\(instanceName)"
        }
    }

    /// The systemd target whose `.wants/` directory enables the unit (none for a unit its timer starts).
    var wantedBy: String? {
        switch job {
        case .up: return "default.target"
        case .rotation: return nil
        case .rotationTimer: return "timers.target"
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

    /// What the service runs: `octunnel tunnel up --home DIR --profile NAME` (or `home up`); a
    /// rotation, `octunnel keygen --rotate --install --if-older-than DAYS --home DIR --profile
    /// NAME` (`--listen` for the home's key).
    public var arguments: [String] {
        switch job {
        case .up:
            return [executable] + role.upCommand + ["--home", octunnelHome, "--profile", profile.rawValue]
        case .rotation(let days), .rotationTimer(let days):
            return [
                executable, "keygen", "--rotate", "--install", "--if-older-than", String(days), "--home", octunnelHome,
                "--profile", profile.rawValue,
            ] + (role == .home ? ["--listen"] : [])
        }
    }

    /// The file's text, marked as written by octunnel (the mark after its comments).
    public func render() -> String {
        switch format {
        case .systemd:
            if case .rotationTimer = job {
                return ServiceFileMark.seal(
                    SystemdTimer(summary: summary, comments: loginService.comments).lines, at: 3, prefix: "# ",
                    suffix: "")
            }
            return ServiceFileMark.seal(SystemdUnit(service: loginService).lines, at: 3, prefix: "# ", suffix: "")
        case .launchd:
            return ServiceFileMark.seal(
                LaunchAgent(service: loginService).lines, at: 4, prefix: "<!-- ", suffix: " -->")
        }
    }

    /// What runs at login, for either renderer.
    var loginService: LoginService {
        let comments =
            switch format {
            case .systemd:
                [
                    header,
                    "octunnel never overwrites or removes this file once it is changed (unless given --force);",
                    "add settings such as Environment= with `systemctl --user edit \(name)` instead.",
                ]
            case .launchd:
                [
                    commentSafeHeader,
                    "octunnel never overwrites or removes this file once it is changed, unless forced.",
                ]
            }
        var service = LoginService(label: name, summary: summary, arguments: arguments, comments: comments)
        switch format {
        case .systemd: service.notRetried = job == .up ? ExitStatus.notRetriedByServices : []
        case .launchd: service.logPath = logPath
        }
        if job != .up {
            service.oneShot = true
            service.interval = 86400
        }
        return service
    }

    /// The `service install` options that wrote the file (`--rotate-every DAYS` for a rotation's).
    private var installOptions: String {
        switch job {
        case .up: return ""
        case .rotation(let days), .rotationTimer(let days): return " --rotate-every \(days)"
        }
    }

    /// The sentence the file's header starts with, naming the command that removes it.
    var header: String {
        let option = profile.isDefault ? "" : " --profile \(profile)"
        return "Written by `octunnel service install \(role)\(option)\(installOptions)`; "
            + "`octunnel service uninstall \(role)\(option)` removes it."
    }

    /// The header without `--` (not allowed in an XML comment).
    var commentSafeHeader: String {
        let what = job == .up ? "" : " (the key's rotation)"
        return
            "Written by `octunnel service install \(role)`\(what) for profile \(profile); `octunnel service uninstall \(role)` removes it."
    }

    var summary: String {
        let what = role == .tunnel ? "the tunnel to the VPS" : "the home machine's reverse tunnel from the VPS"
        switch job {
        case .up: return "octunnel: \(what) (profile \(profile))"
        case .rotation(let days):
            return "octunnel: the key of \(what), rotated on the VPS once it is \(days) days old (profile \(profile))"
        case .rotationTimer(let days):
            return "octunnel: daily check whether the key of \(what) is \(days) days old (profile \(profile))"
        }
    }
}
