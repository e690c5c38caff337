extension ResolvedSettings {
    /// What a command runs: reads the profile's saved settings (a `config.json` that is not
    /// valid is 65, even with a typed target) and, for a typed target, ~/.ssh/config, then
    /// `resolve`s. Throws `SettingsError` for a usage mistake, `OCTunnelError` otherwise.
    public static func load(flags: SettingsFlags, directory: OctunnelDirectory, role: Role,
                            resolver: SSHConfigResolver = SSHConfigResolver()) throws -> ResolvedSettings {
        let saved = try SavedSettings.load(from: directory, profile: flags.profile)
        var notes: [String] = []
        var sshConfig: SSHConfigResolution?
        if let text = flags.target {
            let resolution = try resolver.resolve(text)
            if !resolution.ignored.isEmpty, case .file(let path) = resolution.source {
                notes.append("note: without the ssh client, octunnel read \(resolver.displayPath(path)) for HostName, User, Port and IdentityFile only; ignored for \(text): \(resolution.ignored.joined(separator: ", "))")
            }
            sshConfig = resolution
        }
        var settings = try resolve(flags: flags, saved: saved, sshConfig: sshConfig, role: role)
        settings.notes = notes
        return settings
    }
}
