/// The target, ports and sign-in of one run of a role, each value taken from the first that
/// gives it: the flag, the saved settings of that role and profile, ~/.ssh/config, `Defaults`.
/// `tunnel up`, `tunnel check`, `tunnel reverse-command` and `home up` all start here.
public struct ResolvedSettings: Sendable {
    public let role: Role
    /// What the command line said (the values that are never saved are read from here).
    public let flags: SettingsFlags
    public let target: SSHTarget
    public let remoteHost: String
    public let remotePort: Int
    public let homePort: Int
    /// Whether the user chose the home port (`--home-port`, or a saved port other than the
    /// default): if not, `home up` looks for OpenCode 2's background service (`HomeOpenCode`).
    public let homePortChosen: Bool
    /// The laptop's local port (`tunnel` role).
    public let localPort: Int
    /// The laptop's local address (`tunnel` role).
    public let bind: String
    /// Where OpenCode listens on the home machine (`home` role).
    public let homeHost: String
    /// Every forward of this run, OpenCode's first (`isOpenCode`, from the ports and addresses above), then the `-L` (`tunnel`)
    /// or `-R` (`home`) ones: the flags', else the saved ones.
    public let forwards: [Forward]
    /// What ~/.ssh/config said about the typed target (nil for a saved target).
    public let sshConfig: SSHConfigResolution?
    /// Sign in with the ssh-agent: `--agent`, or saved with `--save` and no `--identity` now.
    public let useAgent: Bool
    /// The key file: `--identity`, else the ssh config's IdentityFile unless octunnel's own key was
    /// authorized for the target (`AuthorizedTargets`); nil: octunnel's own key.
    public internal(set) var identityFile: String?
    /// The saved OpenCode password file (`--password-file` given with `--save`).
    public let savedPasswordFile: String?
    /// The run's notifications: the flags, else the role's saved choice, else on with no command.
    public var notify: NotifyOptions
    /// Where `tunnel up` listens for pair links (`--pair-port auto|N`, `--no-pair-port`, or saved).
    public let pairPort: PairPortChoice
    /// What to tell the user about how the settings were found (ssh config directives ignored).
    public var notes: [String] = []

    /// Resolves each value on its own: the flag, else the saved section of `role` (kept only
    /// when it is for the same VPS host and port as the target), else the ssh config, else the
    /// default. `sshConfig` is the resolution of `flags.target` (nil: the target is parsed as
    /// typed); without a typed target the saved one is used, and there must be one.
    public static func resolve(
        flags: SettingsFlags, saved: SavedSettings?, sshConfig: SSHConfigResolution?,
        role: Role
    ) throws(SettingsError) -> ResolvedSettings {
        let section = SavedSection(saved, role: role)
        var kept = section
        let target: SSHTarget
        if let text = flags.target {
            if let sshConfig {
                target = sshConfig.target
            } else {
                do throws(TargetParseError) { target = try SSHTarget.parse(text) } catch {
                    throw .badTarget(text, reason: error.message)
                }
            }
            // The saved ports belong to the saved VPS: another one starts from the defaults.
            if let section, section.connection.host != target.host || section.connection.port != target.port {
                kept = nil
            }
        } else if let section {
            target = section.connection.target
        } else {
            throw .missingTarget(role: role, profile: flags.profile)
        }
        let typed = flags.target != nil
        let remoteHost = flags.remoteHost ?? kept?.openCode.vpsEnd.host ?? Defaults.remoteHost
        let remotePort = flags.remotePort ?? kept?.openCode.vpsEnd.port ?? Defaults.remotePort
        let homePort = flags.homePort ?? kept?.homePort ?? Defaults.homePort
        let localPort = flags.localPort ?? kept?.localPort ?? Defaults.localPort
        let bind = flags.bind ?? Defaults.bind
        // As `home up` has always done: the saved home address only for the saved target.
        let homeHost = flags.homeHost ?? (typed ? nil : section?.homeHost) ?? Defaults.homeHost
        let vps = HostPort(host: remoteHost, port: remotePort)
        let openCode =
            role == .tunnel
            ? Forward(direction: .local, listen: HostPort(host: bind, port: localPort), target: vps, isOpenCode: true)
            : Forward(
                direction: .remote, listen: vps, target: HostPort(host: homeHost, port: homePort), isOpenCode: true)
        return ResolvedSettings(
            role: role, flags: flags, target: target,
            remoteHost: remoteHost, remotePort: remotePort, homePort: homePort,
            homePortChosen: flags.homePort != nil || (kept?.homePort).map { $0 != Defaults.homePort } == true,
            localPort: localPort, bind: bind, homeHost: homeHost,
            forwards: [openCode] + (flags.forwards ?? kept?.others ?? []),
            sshConfig: typed ? sshConfig : nil,
            useAgent: flags.agent || (kept?.connection.agent == true && flags.identity == nil),
            identityFile: flags.identity ?? (typed ? sshConfig?.identityFile : nil),
            savedPasswordFile: kept?.connection.passwordFile,
            notify: flags.notifications.resolved(saved: kept?.notifications),
            pairPort: flags.pairPort ?? kept?.tunnel?.pairPort ?? .automatic
        )
    }
}

/// A role's saved section: what both roles save, its forwards (OpenCode's first) and the
/// home's OpenCode port (the home's forward's target; the tunnel's own key).
struct SavedSection {
    let connection: any SavedConnection
    /// The saved forwards, OpenCode's first: `-L` (`tunnel` role) or `-R` (`home` role).
    let forwards: [Forward]
    let homePort: Int
    /// The whole saved section of the `tunnel` role (its pair-port choice).
    var tunnel: TunnelSettings? = nil
    /// The role's saved notification choices.
    var notifications: NotifySettings? = nil

    init?(_ saved: SavedSettings?, role: Role) {
        switch role {
        case .tunnel:
            guard let tunnel = saved?.tunnel else { return nil }
            (connection, forwards, homePort) = (tunnel, tunnel.forwards, tunnel.homePort)
            self.tunnel = tunnel
            notifications = tunnel.notifications
        case .home:
            guard let home = saved?.home else { return nil }
            (connection, forwards, homePort) = (home, home.forwards, home.homePort)
            notifications = home.notifications
        }
    }

    var openCode: Forward { forwards[0] }
    /// The forwards beside OpenCode's.
    var others: [Forward] { Array(forwards.dropFirst()) }
    /// The laptop's port (`tunnel` role: where OpenCode's `-L` listens).
    var localPort: Int? { openCode.direction == .local ? openCode.listen.port : nil }
    /// Where OpenCode listens at home (`home` role: where OpenCode's `-R` goes).
    var homeHost: String? { openCode.direction == .remote ? openCode.target.host : nil }
}
