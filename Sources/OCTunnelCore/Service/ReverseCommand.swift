import Foundation

/// The command the home machine runs to keep its reverse tunnel to the VPS, in four shapes.
public struct ReverseCommand: Sendable {
    /// The supported renderings.
    public enum Format: String, CaseIterable, Sendable {
        case ssh, autossh, systemd, launchd
        /// `octunnel home up …`: the shell line, a systemd user unit, a LaunchAgent.
        case home, homeSystemd = "home-systemd", homeLaunchd = "home-launchd"
    }

    /// The octunnel binary the `home-systemd` and `home-launchd` renderings run (an absolute path).
    public var octunnelPath = "octunnel"

    /// `home up`'s arguments after the binary: the same VPS, OpenCode's ports and listen
    /// address, and a `-R` for each other forward.
    public var homeUpArguments: [String] {
        var args = [
            "home", "up", target.description, "--remote-port", String(remotePort), "--home-port", String(homePort),
        ]
        if remoteHost != Defaults.remoteHost { args += ["--remote-host", remoteHost] }
        for forward in others { args += ["-R", forward.specification] }
        return args
    }

    public let target: SSHTarget
    /// The home machine's forwards (`-R`: VPS listen → home), OpenCode's first (`isOpenCode`).
    public let forwards: [Forward]

    public init(target: SSHTarget, forwards: [Forward]) {
        self.target = target
        self.forwards = forwards
    }

    /// OpenCode's forward alone: the VPS's `remoteHost:remotePort` to `homePort` here.
    public init(
        target: SSHTarget, remoteHost: String = Defaults.remoteHost, remotePort: Int = Defaults.remotePort,
        homePort: Int = Defaults.homePort
    ) {
        self.init(
            target: target,
            forwards: [
                Forward(
                    direction: .remote, listen: HostPort(host: remoteHost, port: remotePort),
                    target: HostPort(host: Defaults.homeHost, port: homePort), isOpenCode: true)
            ])
    }

    /// What the home machine runs for the laptop's `forwards` (`tunnel up`'s, OpenCode's first):
    /// OpenCode's to `homePort` there, each other one to its own local port (`Forward.homeSide`).
    public init(target: SSHTarget, laptopForwards forwards: [Forward], homePort: Int) {
        self.init(
            target: target,
            forwards: forwards.map { forward in
                forward.isOpenCode && forward.direction == .local
                    ? Forward(
                        direction: .remote, listen: forward.target,
                        target: HostPort(host: Defaults.homeHost, port: homePort), isOpenCode: true)
                    : forward.homeSide
            })
    }

    /// The forward the `--remote-host`, `--remote-port` and `--home-port` flags write: OpenCode's
    /// (the first, when none is marked).
    private var openCode: Forward { forwards.first(where: \.isOpenCode) ?? forwards[0] }

    /// The forwards each written as a `-R` of their own.
    private var others: [Forward] { forwards.filter { $0 != openCode } }

    /// Where the VPS listens for OpenCode, and OpenCode's port at home.
    public var remoteHost: String { openCode.listen.host }
    public var remotePort: Int { openCode.listen.port }
    public var homePort: Int { openCode.target.port }

    /// The `-R` argument: VPS `remoteHost:remotePort` → home `127.0.0.1:homePort`.
    public var forwardSpec: String {
        let bind = remoteHost.contains(":") ? "[\(remoteHost)]" : remoteHost
        return "\(bind):\(remotePort):\(Defaults.homeHost):\(homePort)"
    }

    /// The ssh arguments after the program name, in order.
    public var sshArguments: [String] {
        var args =
            [
                "-N", "-o", "ExitOnForwardFailure=yes", "-o", "ServerAliveInterval=30", "-o", "ServerAliveCountMax=3",
                "-R", forwardSpec,
            ] + others.flatMap { ["-R", $0.specification] }
        if target.port != 22 { args += ["-p", String(target.port)] }
        args.append("\(target.user)@\(target.host)")
        return args
    }

    /// The rendering of `format`, ready to paste or save.
    public func render(_ format: Format) -> String {
        switch format {
        case .ssh:
            return (["ssh"] + sshArguments).map(shellQuote).joined(separator: " ")
        case .autossh:
            let args = ["autossh", "-M", "0"] + sshArguments
            return "AUTOSSH_GATETIME=0 " + args.map(shellQuote).joined(separator: " ")
        case .home:
            return (["octunnel"] + homeUpArguments).map(shellQuote).joined(separator: " ")
        case .systemd, .homeSystemd:
            return SystemdUnit(service: loginService(format)).lines.joined(separator: "\n")
        case .launchd, .homeLaunchd:
            return LaunchAgent(service: loginService(format)).lines.joined(separator: "\n")
        }
    }

    /// What the home machine runs at login in `format` (ssh's `-R`, or `octunnel home up`),
    /// for the same renderers `service install` uses, with the comments that say where the file
    /// goes and how to start it.
    func loginService(_ format: Format) -> LoginService {
        let octunnel = format == .homeSystemd || format == .homeLaunchd
        let program = octunnel ? [octunnelPath] + homeUpArguments : ["/usr/bin/ssh"] + sshArguments
        let summary = "octunnel reverse tunnel: VPS \(remoteHost):\(remotePort) -> OpenCode 127.0.0.1:\(homePort)"
        switch format {
        case .launchd, .homeLaunchd:
            return LoginService(
                label: "dev.octunnel.home", summary: summary, arguments: program,
                comments: [
                    "~/Library/LaunchAgents/dev.octunnel.home.plist; "
                        + "load with: launchctl load -w ~/Library/LaunchAgents/dev.octunnel.home.plist"
                ])
        default:
            return LoginService(
                label: "octunnel-home.service", summary: summary, arguments: program,
                comments: [
                    "~/.config/systemd/user/octunnel-home.service",
                    "Enable with: systemctl --user daemon-reload && systemctl --user enable --now octunnel-home.service",
                    "(and `loginctl enable-linger $USER` to keep it running after logout)",
                ], notRetried: octunnel ? ExitStatus.notRetriedByServices : [])
        }
    }
}

/// Quotes a word for POSIX shells only when it needs it.
public func shellQuote(_ word: String) -> String {
    let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_+=:,./-[]".unicodeScalars)
    if !word.isEmpty && word.unicodeScalars.allSatisfy({ safe.contains($0) }) { return word }
    return "'" + word.replacingScalars("'", with: "'\\''") + "'"
}
