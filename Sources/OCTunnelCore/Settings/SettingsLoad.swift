extension ResolvedSettings {
    /// What a command runs: reads the profile's saved settings (a `config.json` that is not
    /// valid is 65, even with a typed target) and, for a typed target, ~/.ssh/config, then
    /// `resolve`s. Throws `SettingsError` for a usage mistake, an `OCTunnelFailure` otherwise.
    public static func load(
        flags: SettingsFlags, directory: OctunnelDirectory, role: Role,
        resolver: SSHConfigResolver = SSHConfigResolver()
    ) throws -> ResolvedSettings {
        let saved = try SavedSettings.load(from: directory, profile: flags.profile)
        var notes: [String] = []
        var sshConfig: SSHConfigResolution?
        if let text = flags.target {
            let resolution = try resolver.resolve(text)
            if !resolution.ignored.isEmpty, case .file(let path) = resolution.source {
                notes.append(
                    "note: without the ssh client, octunnel read \(resolver.displayPath(path))"
                        + " for HostName, User, Port and IdentityFile only; "
                        + "ignored for \(text): \(resolution.ignored.joined(separator: ", "))")
            }
            sshConfig = resolution
        }
        var settings = try resolve(flags: flags, saved: saved, sshConfig: sshConfig, role: role)
        if flags.identity == nil, !settings.useAgent, let configKey = settings.identityFile,
            AuthorizedTargets(directory: directory).contains(settings.target, role: role)
        {
            // The least-privilege line `authorize` installed is the one signed in with (issue 55, finding 8).
            settings.identityFile = nil
            notes.append(
                "note: signing in to \(settings.target) with octunnel's key \(directory.privateKeyPath), authorized there by "
                    + "`octunnel authorize`, not the ssh config's IdentityFile \(resolver.displayPath(configKey)) "
                    + "(--identity chooses another key)")
        }
        settings.notes = notes
        return settings
    }
}
