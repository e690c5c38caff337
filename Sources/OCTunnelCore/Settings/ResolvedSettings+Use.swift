import Foundation

extension ResolvedSettings {
    /// The key file to sign in with: `--identity`, else the ssh config's, else octunnel's own.
    public func keyPath(directory: OctunnelDirectory) -> String {
        identityFile ?? directory.privateKeyPath
    }

    /// The note for an ssh config whose IdentityFiles octunnel cannot sign with (it then uses
    /// its own key), or nil.
    public func keyNote(directory: OctunnelDirectory) -> String? {
        guard !useAgent, flags.identity == nil, let config = sshConfig, config.identityFile == nil,
            !config.skippedIdentities.isEmpty
        else { return nil }
        return "note: the ssh config's IdentityFile \(config.skippedIdentities.joined(separator: ", "))"
            + " is not a key octunnel can sign with; using " + "\(keyPath(directory: directory))"
    }

    /// The connection to the VPS, its key loaded now (an encrypted key's passphrase asked
    /// once), after the note on an ssh config key octunnel cannot use (said through `say`).
    public func signIn(directory: OctunnelDirectory, say: (String) -> Void) throws -> ConnectionSettings {
        if let note = keyNote(directory: directory) { say(note) }
        return try connection(directory: directory).preparedForSignIn(prompt: PassphrasePrompt())
    }

    /// OpenCode's user and password for the health test: `passwordFile` (`--password-file` as
    /// given), else the saved file, else the environment (`OpenCodeCredentials.load`).
    public func credentials(passwordFile: String?) throws -> OpenCodeCredentials {
        try OpenCodeCredentials.load(
            passwordFile: passwordFile.map(UserPath.absolute), savedPasswordFile: savedPasswordFile)
    }

    /// How to reach and sign in to the VPS (the key not loaded yet: `preparedForSignIn`).
    /// `sshHome` is where `~/.ssh` is, for OpenSSH's known_hosts.
    public func connection(
        directory: OctunnelDirectory, sshHome: String = SSHConfigResolver().home
    ) -> ConnectionSettings {
        var settings = ConnectionSettings(
            target: target, authentication: useAgent ? .agent : .keyFile(keyPath(directory: directory)),
            knownHostsPath: directory.knownHostsPath, connectTimeout: Double(flags.connectTimeout),
            expectFingerprint: flags.expectFingerprint, trustNew: flags.trustNew)
        settings.keyLineVPSEnd = HostPort(host: remoteHost, port: remotePort)
        if flags.openSSHKnownHosts {
            settings.openSSHKnownHosts = .standard(home: sshHome, resolution: sshConfig)
        }
        settings.strictHostKeyChecking = sshConfig?.strictHostKeyChecking ?? .ask
        return settings
    }

    /// What the home machine runs for this VPS and these ports.
    public var reverse: ReverseCommand {
        ReverseCommand(target: target, laptopForwards: forwards, homePort: homePort)
    }

    /// `tunnel up`'s engine options: without `--bind`, ::1 is listened on beside 127.0.0.1.
    public func tunnelOptions(_ connection: ConnectionSettings, keepalive: Double, warm: Int?) -> TunnelOptions {
        var options = TunnelOptions(
            connection: connection, forwards: forwards, keepalive: keepalive, homePort: homePort, warm: warm)
        options.alsoIPv6Loopback = flags.bind == nil
        return options
    }

    /// `tunnel check`'s engine options (`TunnelCheck` picks its own ports and address).
    public func checkOptions(_ connection: ConnectionSettings) -> TunnelOptions {
        TunnelOptions(connection: connection, forwards: forwards, homePort: homePort)
    }

    /// `home up`'s engine options: OpenCode at `homeHost:homePort`, and the authorized_keys
    /// line the VPS-forbids-listening message gives.
    public func homeForwardOptions(
        _ connection: ConnectionSettings, directory: OctunnelDirectory, keepalive: Double,
        httpErrors: Bool
    ) -> HomeForwardOptions {
        var options = HomeForwardOptions(
            connection: connection, forwards: forwards, keepalive: keepalive, httpErrors: httpErrors)
        options.listenLine = listenLine(connection, directory: directory, listens: options.forwards.map(\.listen))
        return options
    }

    /// `--save`: these settings become the profile's section of this role, every other
    /// section kept; values equal to the defaults that older files lack are left out. The
    /// tunnel's forwards are saved listening on 127.0.0.1 for OpenCode's: `--bind` is never saved.
    public func save(to directory: OctunnelDirectory, agent: Bool, passwordFile: String?) throws {
        switch role {
        case .tunnel:
            var saved = forwards
            saved[0].listen = HostPort(host: Defaults.bind, port: localPort)
            try TunnelSettings(
                host: target.host, port: target.port, username: target.user, forwards: saved, homePort: homePort,
                agent: agent ? true : nil, passwordFile: passwordFile, notifications: NotifySettings(saving: notify),
                pairPort: pairPort == .automatic ? nil : pairPort
            )
            .save(to: directory, profile: flags.profile)
        case .home:
            try HomeSettings(
                host: target.host, port: target.port, username: target.user, forwards: forwards,
                agent: agent ? true : nil, passwordFile: passwordFile, notifications: NotifySettings(saving: notify)
            )
            .save(to: directory, profile: flags.profile)
        }
    }

    /// The authorized_keys line that lets this key listen (for the VPS-forbids-listening
    /// message): with the key's public half when it can be read, else a placeholder.
    private func listenLine(
        _ connection: ConnectionSettings, directory: OctunnelDirectory, listens: [HostPort]
    ) -> String {
        var key: SSHPublicKey?
        if case .keyFile(let path) = connection.authentication {
            if path == directory.privateKeyPath {
                key = try? KeyStore(directory: directory).publicKey()
            } else if let text = try? String(contentsOfFile: path + ".pub", encoding: .utf8) {
                key = SSHPublicKey.parse(line: text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        guard let key else {
            return listenAuthorizedKeysOptions(listens: listens) + " <your public key>"
        }
        return listenAuthorizedKeysLine(key, listens: listens)
    }
}
