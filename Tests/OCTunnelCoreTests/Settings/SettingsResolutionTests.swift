import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `ResolvedSettings.resolve`: each value from the flag, else the role's saved section (only
/// for the same VPS), else ~/.ssh/config, else `Defaults`; for the laptop (`tunnel`) and the
/// home machine (`home`).
@Suite("Settings resolution: flag, saved, ssh config, default", .ownThreads)
struct SettingsResolutionTests {
    let savedTunnel = TunnelSettings(
        host: "vps.example.com", port: 2222, username: "me", remotePort: 18081, localPort: 5000,
        homePort: 4100, remoteHost: "::1", agent: true, passwordFile: "/p/tunnel")
    let savedHome = HomeSettings(
        host: "vps.example.com", port: 2222, username: "home", remotePort: 18082, homePort: 4200,
        remoteHost: "10.0.0.1", homeHost: "192.168.1.5", agent: true, passwordFile: "/p/home")
    var saved: SavedSettings { SavedSettings(tunnel: savedTunnel, home: savedHome) }

    /// An ssh config resolution of a typed alias, as `SSHConfigResolver` returns it.
    func sshConfig(_ target: SSHTarget, identityFile: String? = nil, skipped: [String] = []) -> SSHConfigResolution {
        SSHConfigResolution(
            target: target, identityFile: identityFile, skippedIdentities: skipped, ignored: [], source: .ssh,
            changedTarget: true)
    }

    // MARK: defaults

    @Test(arguments: Role.allCases)
    func aTypedTargetWithNothingSavedTakesTheDefaults(role: Role) throws {
        let settings = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: "u@vps.example.com"), saved: nil, sshConfig: nil, role: role)
        #expect(settings.target == SSHTarget(user: "u", host: "vps.example.com", port: 22))
        #expect(settings.remoteHost == Defaults.remoteHost)
        #expect(settings.remotePort == Defaults.remotePort)
        #expect(settings.homePort == Defaults.homePort)
        #expect(settings.localPort == Defaults.localPort)
        #expect(settings.bind == Defaults.bind)
        #expect(settings.homeHost == Defaults.homeHost)
        #expect(!settings.useAgent)
        #expect(settings.identityFile == nil && settings.savedPasswordFile == nil && settings.sshConfig == nil)
        #expect(settings.keyPath(directory: OctunnelDirectory(path: "/h")) == "/h/id_ed25519")
    }

    @Test func theDefaultsAreTheDocumentedOnes() {
        #expect(Defaults.remoteHost == "127.0.0.1" && Defaults.bind == "127.0.0.1" && Defaults.homeHost == "127.0.0.1")
        #expect(Defaults.remotePort == 18080 && Defaults.homePort == 4096 && Defaults.localPort == 4096)
        #expect(
            Defaults.keepaliveSeconds == 15 && Defaults.connectTimeoutSeconds == 30
                && Defaults.healthTimeoutSeconds == 5)
    }

    // MARK: saved

    @Test func withoutATargetTheLaptopUsesItsSavedSection() throws {
        let settings = try ResolvedSettings.resolve(flags: SettingsFlags(), saved: saved, sshConfig: nil, role: .tunnel)
        #expect(settings.target == savedTunnel.target)
        #expect(
            settings.remoteHost == "::1" && settings.remotePort == 18081 && settings.homePort == 4100
                && settings.localPort == 5000)
        #expect(settings.useAgent && settings.savedPasswordFile == "/p/tunnel")
        #expect(settings.homeHost == Defaults.homeHost)
    }

    @Test func withoutATargetTheHomeMachineUsesItsSavedSection() throws {
        let settings = try ResolvedSettings.resolve(flags: SettingsFlags(), saved: saved, sshConfig: nil, role: .home)
        #expect(settings.target == savedHome.target)
        #expect(settings.remoteHost == "10.0.0.1" && settings.remotePort == 18082 && settings.homePort == 4200)
        #expect(settings.homeHost == "192.168.1.5")
        #expect(settings.useAgent && settings.savedPasswordFile == "/p/home")
    }

    @Test func aRoleWithoutItsOwnSectionDoesNotBorrowTheOther() throws {
        let onlyTunnel = SavedSettings(tunnel: savedTunnel)
        #expect(throws: SettingsError.missingTarget(role: .home, profile: .default)) {
            try ResolvedSettings.resolve(flags: SettingsFlags(), saved: onlyTunnel, sshConfig: nil, role: .home)
        }
        let onlyHome = SavedSettings(home: savedHome)
        #expect(throws: SettingsError.missingTarget(role: .tunnel, profile: .default)) {
            try ResolvedSettings.resolve(flags: SettingsFlags(), saved: onlyHome, sshConfig: nil, role: .tunnel)
        }
    }

    @Test(arguments: Role.allCases)
    func theSameVPSTypedAgainKeepsTheSavedValuesWhateverTheUser(role: Role) throws {
        let flags = SettingsFlags(target: "other@vps.example.com:2222")
        let settings = try ResolvedSettings.resolve(flags: flags, saved: saved, sshConfig: nil, role: role)
        #expect(settings.target.user == "other")
        #expect(settings.remotePort == (role == .tunnel ? 18081 : 18082))
        #expect(settings.useAgent)
    }

    @Test(arguments: Role.allCases, ["me@vps.example.com:22", "me@elsewhere.example.com:2222"])
    func anotherVPSStartsFromTheDefaults(role: Role, target: String) throws {
        let settings = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: target), saved: saved, sshConfig: nil, role: role)
        #expect(settings.remoteHost == Defaults.remoteHost && settings.remotePort == Defaults.remotePort)
        #expect(settings.homePort == Defaults.homePort && settings.localPort == Defaults.localPort)
        #expect(!settings.useAgent && settings.savedPasswordFile == nil)
    }

    @Test func theSavedHomeAddressIsUsedOnlyWithoutATypedTarget() throws {
        // As `home up` has always done: a typed target, even the saved one, starts from 127.0.0.1.
        let typed = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: "home@vps.example.com:2222"), saved: saved,
            sshConfig: nil, role: .home)
        #expect(typed.homePort == 4200)
        #expect(typed.homeHost == Defaults.homeHost)
    }

    // MARK: flags

    @Test(arguments: Role.allCases)
    func flagsWinOverTheSavedSection(role: Role) throws {
        let flags = SettingsFlags(
            remoteHost: "10.9.9.9", remotePort: 19000, homePort: 49374, localPort: 0, bind: "::1",
            homeHost: "10.1.1.1", identity: "/keys/id")
        let settings = try ResolvedSettings.resolve(flags: flags, saved: saved, sshConfig: nil, role: role)
        #expect(settings.remoteHost == "10.9.9.9" && settings.remotePort == 19000 && settings.homePort == 49374)
        #expect(settings.localPort == 0 && settings.bind == "::1" && settings.homeHost == "10.1.1.1")
        // --identity wins over the saved agent choice.
        #expect(!settings.useAgent)
        #expect(settings.keyPath(directory: OctunnelDirectory(path: "/h")) == "/keys/id")
    }

    @Test func theAgentFlagWinsWithNothingSaved() throws {
        let settings = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: "vps", agent: true), saved: nil, sshConfig: nil, role: .tunnel)
        #expect(settings.useAgent)
        #expect(settings.connection(directory: OctunnelDirectory(path: "/h"), sshHome: "/u").authentication == .agent)
    }

    // MARK: ssh config

    @Test(arguments: Role.allCases)
    func theSSHConfigNamesTheTargetAndTheKey(role: Role) throws {
        let real = SSHTarget(user: "deploy", host: "vps.example.com", port: 2222)
        let settings = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: "vps"), saved: saved,
            sshConfig: sshConfig(real, identityFile: "/u/.ssh/vps"), role: role)
        #expect(settings.target == real)
        // The alias leads to the saved VPS, so its saved values stay.
        #expect(settings.remotePort == (role == .tunnel ? 18081 : 18082))
        #expect(settings.keyPath(directory: OctunnelDirectory(path: "/h")) == "/u/.ssh/vps")
        #expect(settings.sshConfig?.target == real)
    }

    @Test func theIdentityFlagWinsOverTheSSHConfigsKey() throws {
        let flags = SettingsFlags(target: "vps", identity: "/keys/mine")
        let settings = try ResolvedSettings.resolve(
            flags: flags, saved: nil,
            sshConfig: sshConfig(SSHTarget(user: "u", host: "h", port: 22), identityFile: "/u/.ssh/vps"),
            role: .tunnel)
        #expect(settings.keyPath(directory: OctunnelDirectory(path: "/h")) == "/keys/mine")
    }

    @Test func anSSHConfigKeyOctunnelCannotUseIsNotedAndItsOwnIsUsed() throws {
        let config = sshConfig(SSHTarget(user: "u", host: "h", port: 22), skipped: ["~/.ssh/id_rsa (RSA)"])
        let settings = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: "vps"), saved: nil, sshConfig: config, role: .tunnel)
        let directory = OctunnelDirectory(path: "/h")
        #expect(settings.keyPath(directory: directory) == "/h/id_ed25519")
        #expect(
            settings.keyNote(directory: directory)
                == "note: the ssh config's IdentityFile ~/.ssh/id_rsa (RSA) is not a key octunnel can sign with; using /h/id_ed25519"
        )
        let withFlag = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: "vps", identity: "/k"), saved: nil, sshConfig: config,
            role: .tunnel)
        #expect(withFlag.keyNote(directory: directory) == nil)
    }

    @Test func withoutATypedTargetTheSSHConfigIsNotConsulted() throws {
        let config = sshConfig(SSHTarget(user: "x", host: "x", port: 1), identityFile: "/x")
        let settings = try ResolvedSettings.resolve(
            flags: SettingsFlags(), saved: saved, sshConfig: config, role: .tunnel)
        #expect(settings.target == savedTunnel.target)
        #expect(settings.sshConfig == nil && settings.identityFile == nil)
    }

    // MARK: mistakes

    @Test func noTargetAnywhereSaysHowToSaveOneForTheRoleAndProfile() throws {
        let work = try ProfileName("work")
        #expect(throws: SettingsError.missingTarget(role: .home, profile: work)) {
            try ResolvedSettings.resolve(flags: SettingsFlags(profile: work), saved: nil, sshConfig: nil, role: .home)
        }
        #expect(
            SettingsError.missingTarget(role: .home, profile: work).message
                == "missing target: give [user@]host[:port] (or save one with `octunnel home up TARGET --save --profile work`)"
        )
        #expect(
            SettingsError.missingTarget(role: .tunnel, profile: .default).message
                == "missing target: give [user@]host[:port] (or save one with `octunnel tunnel up TARGET --save`)")
    }

    @Test func aBadTypedTargetIsAUsageMistake() {
        #expect(throws: SettingsError.self) {
            try ResolvedSettings.resolve(
                flags: SettingsFlags(target: "vps:99999"), saved: nil, sshConfig: nil, role: .tunnel)
        }
    }

    // MARK: what the resolution feeds

    @Test func theConnectionCarriesTheFlagsThatAreNeverSaved() throws {
        let flags = SettingsFlags(
            target: "u@vps:22", connectTimeout: 7, expectFingerprint: "SHA256:x", trustNew: false,
            openSSHKnownHosts: false)
        let settings = try ResolvedSettings.resolve(flags: flags, saved: nil, sshConfig: nil, role: .tunnel)
        let connection = settings.connection(directory: OctunnelDirectory(path: "/h"), sshHome: "/u")
        #expect(connection.connectTimeout == 7 && connection.expectFingerprint == "SHA256:x" && !connection.trustNew)
        #expect(connection.openSSHKnownHosts == nil)
        #expect(connection.knownHostsPath == "/h/known_hosts")
        #expect(connection.keyLineVPSEnd == HostPort(host: Defaults.remoteHost, port: Defaults.remotePort))
        #expect(
            settings.connection(directory: OctunnelDirectory(path: "/h"), sshHome: "/u").authentication
                == .keyFile("/h/id_ed25519"))
    }

    @Test func onlyWithoutBindDoesTheTunnelListenOnIPv6LoopbackToo() throws {
        let plain = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: "vps"), saved: nil, sshConfig: nil, role: .tunnel)
        let connection = plain.connection(directory: OctunnelDirectory(path: "/h"), sshHome: "/u")
        #expect(plain.tunnelOptions(connection, keepalive: 15, warm: nil).alsoIPv6Loopback)
        let bound = try ResolvedSettings.resolve(
            flags: SettingsFlags(target: "vps", bind: "127.0.0.2"), saved: nil, sshConfig: nil,
            role: .tunnel)
        let options = bound.tunnelOptions(connection, keepalive: 15, warm: 3)
        #expect(!options.alsoIPv6Loopback && options.openCode.listen.host == "127.0.0.2" && options.warm == 3)
        #expect(!plain.checkOptions(connection).alsoIPv6Loopback)
    }

    @Test(arguments: Role.allCases)
    func savedSettingsResolveToThemselves(role: Role) throws {
        try withTemporaryDirectory { dir in
            let directory = OctunnelDirectory(path: dir + "/octunnel")
            let flags = SettingsFlags(
                target: "me@vps.example.com:2222", remoteHost: "::1", remotePort: 18090, homePort: 4300,
                localPort: 5001, homeHost: "10.2.2.2")
            let settings = try ResolvedSettings.resolve(flags: flags, saved: nil, sshConfig: nil, role: role)
            try settings.save(to: directory, agent: true, passwordFile: "/p/f")
            let loaded = try ResolvedSettings.load(
                flags: SettingsFlags(), directory: directory, role: role,
                resolver: SSHConfigResolver(home: dir, sshPath: nil))
            #expect(loaded.target == settings.target && loaded.remoteHost == "::1" && loaded.remotePort == 18090)
            #expect(loaded.homePort == 4300 && loaded.useAgent && loaded.savedPasswordFile == "/p/f")
            #expect(loaded.localPort == (role == .tunnel ? 5001 : Defaults.localPort))
            #expect(loaded.homeHost == (role == .home ? "10.2.2.2" : Defaults.homeHost))
        }
    }

    // MARK: the notify and pair-port choices (tunnel up --save keeps them)

    /// Saves `flags`' choices, then resolves a later run's `later` flags against them.
    func choices(
        saving flags: SettingsFlags, later: SettingsFlags = SettingsFlags(), role: Role = .tunnel
    ) throws -> ResolvedSettings {
        try withTemporaryDirectory { dir in
            let directory = OctunnelDirectory(path: dir + "/octunnel")
            var typed = flags
            typed.target = "me@vps.example.com"
            try ResolvedSettings.resolve(flags: typed, saved: nil, sshConfig: nil, role: role).save(
                to: directory, agent: false, passwordFile: nil)
            return try ResolvedSettings.load(
                flags: later, directory: directory, role: role, resolver: SSHConfigResolver(home: dir, sshPath: nil))
        }
    }

    @Test("home up saves and reads its notify choices as tunnel up does (its own section), a later flag winning")
    func homeKeepsItsNotifyChoices() throws {
        var command = SettingsFlags()
        (command.notifications.notifyCommand, command.notifications.notifyTimeout) = ("/home/me/bin/push", 30)
        let kept = try choices(saving: command, role: .home)
        #expect(kept.notify.enabled && kept.notify.command == "/home/me/bin/push" && kept.notify.commandTimeout == 30)
        var quiet = SettingsFlags()
        quiet.notifications.notify = false
        #expect(try !choices(saving: quiet, role: .home).notify.enabled)
        #expect(try !choices(saving: command, later: quiet, role: .home).notify.enabled)
        #expect(try choices(saving: SettingsFlags(), role: .home).notify == NotifyOptions())
    }

    @Test func notificationsAndThePairPortAreOnWithNothingSaidAndNothingSaved() throws {
        let settings = try choices(saving: SettingsFlags())
        #expect(
            settings.notify.enabled && settings.notify.command == nil && settings.notify.commandTimeout == 10
                && settings.pairPort == .automatic)
    }

    @Test func theSavedChoicesComeBackAndALaterFlagWinsOverEach() throws {
        var quiet = SettingsFlags()
        (quiet.notifications.notify, quiet.pairPort) = (false, .off)
        let off = try choices(saving: quiet)
        #expect(!off.notify.enabled && off.notify.command == nil && off.pairPort == .off)
        var on = SettingsFlags()
        (on.notifications.notify, on.pairPort) = (true, .automatic)
        let back = try choices(saving: quiet, later: on)
        #expect(back.notify.enabled && back.pairPort == .automatic)
        // --pair-port N is kept as N; a file of an earlier version (false) still reads as off.
        var given = SettingsFlags()
        given.pairPort = .port(49380)
        #expect(try choices(saving: given).pairPort == .port(49380))
        // A typed command turns a saved --no-notify back on.
        var typed = SettingsFlags()
        typed.notifications.notifyCommand = "/bin/push-now"
        #expect(try choices(saving: quiet, later: typed).notify.command == "/bin/push-now")

        var command = SettingsFlags()
        (command.notifications.notifyCommand, command.notifications.notifyTimeout) = ("/home/me/bin/push", 30)
        let kept = try choices(saving: command)
        #expect(kept.notify.enabled && kept.notify.command == "/home/me/bin/push" && kept.notify.commandTimeout == 30)
        // --no-notify later drops the saved command for that run; a new command replaces it.
        var no = SettingsFlags()
        no.notifications.notify = false
        let silenced = try choices(saving: command, later: no)
        #expect(!silenced.notify.enabled && silenced.notify.command == nil)
        let replaced = try choices(saving: command, later: typed)
        #expect(replaced.notify.command == "/bin/push-now" && replaced.notify.commandTimeout == 30)
    }

    @Test func aHandEditedTimeoutOutOfRangeOrAnEmptyCommandIsRefusedNotUsed() throws {
        for (key, value) in [
            ("notifyTimeout", "0"), ("notifyTimeout", "601"), ("notifyCommand", "\"\""), ("pairPort", "80"),
            ("pairPort", "\"5432\""),
        ] {
            try withTemporaryDirectory { dir in
                let directory = OctunnelDirectory(path: dir + "/octunnel")
                _ = try directory.prepare()
                let text =
                    #"{"tunnel":{"host":"vps","port":22,"username":"me","remotePort":18080,"localPort":4096,"homePort":4096,""#
                    + key + "\":" + value + "}}"
                try text.write(toFile: directory.configPath, atomically: true, encoding: .utf8)
                #expect(throws: (any Error).self, "\(key)=\(value)") {
                    try ResolvedSettings.load(
                        flags: SettingsFlags(), directory: directory, role: .tunnel,
                        resolver: SSHConfigResolver(home: dir, sshPath: nil))
                }
            }
        }
    }
}
