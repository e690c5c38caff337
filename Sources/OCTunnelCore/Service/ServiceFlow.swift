/// `service install`, `uninstall` and `status` as flows over a `ServiceDefinition`: what to
/// check, write, run and report, decided here; the CLI prints the outcome.
public struct ServiceFlow: Sendable {
    public let definition: ServiceDefinition

    public init(definition: ServiceDefinition) { self.definition = definition }

    /// What `install` did.
    public struct Installed: Sendable {
        public let outcome: ServiceInstaller.InstallOutcome
        /// The service manager commands that start it now and at login.
        public let commands: [ServiceCommand]
        /// Whether they were run (`--now`).
        public let started: Bool
        /// The rotation's files (`--rotate-every`), each with what was done to it.
        public var rotation: [(path: String, outcome: ServiceInstaller.InstallOutcome)] = []
    }

    /// Checks the definition and that `role`'s settings of `profile` are saved in `home`, then
    /// writes the file (never over one it did not write, unless `force`) and, with `startNow`,
    /// enables and starts it.
    /// What `service install` says of `installed` (stderr): the file's outcome, how it was or
    /// is started, and, for systemd, lingering.
    public func lines(_ installed: Installed) -> [String] {
        var lines: [String]
        switch installed.outcome {
        case .created: lines = ["wrote \(definition.path)"]
        case .replaced: lines = ["replaced \(definition.path)"]
        case .unchanged: lines = ["\(definition.path) is up to date"]
        }
        for (path, outcome) in installed.rotation {
            switch outcome {
            case .created: lines.append("wrote \(path)")
            case .replaced: lines.append("replaced \(path)")
            case .unchanged: lines.append("\(path) is up to date")
            }
        }
        if installed.started {
            lines.append("started \(definition.name): \(ServiceManager.shown(installed.commands))")
        } else {
            lines.append("start it now and at every login:\n  \(ServiceManager.shown(installed.commands))")
        }
        if definition.format == .systemd {
            lines.append("to run it without a login session too (at boot): loginctl enable-linger $USER")
        }
        return lines
    }

    /// With `rotateEvery`, the key's rotation is installed beside it (`ServiceDefinition.rotation`):
    /// run daily, it rotates the key on the VPS once it is that many days old.
    public func install(
        directory: OctunnelDirectory, profile: ProfileName, role: Role, force: Bool, startNow: Bool,
        rotateEvery: Int? = nil
    ) throws -> Installed {
        try checkInstallable(directory: directory, profile: profile, role: role)
        let outcome = try ServiceInstaller(definition: definition).install(force: force)
        let manager = ServiceManager(definition: definition)
        var commands = manager.enableCommands(replacing: outcome == .replaced)
        var rotation: [(path: String, outcome: ServiceInstaller.InstallOutcome)] = []
        for extra in rotateEvery.map(definition.rotation(everyDays:)) ?? [] {
            let done = try ServiceInstaller(definition: extra).install(force: force)
            rotation.append((extra.path, done))
            commands += ServiceManager(definition: extra).enableCommands(replacing: done == .replaced)
        }
        var installed = Installed(outcome: outcome, commands: commands, started: false)
        installed.rotation = rotation
        guard startNow else { return installed }
        guard manager.isAvailable else {
            throw ServiceError.serviceManagerFailed(
                command: ServiceManager.shown(commands), detail: "\(manager.tool) not found on PATH")
        }
        try manager.run(commands)
        installed = Installed(outcome: outcome, commands: commands, started: true)
        installed.rotation = rotation
        return installed
    }

    /// The rotation's files that are installed now (whatever `--rotate-every` wrote them with).
    func installedRotation() -> [ServiceDefinition] {
        definition.rotation(everyDays: 1).filter {
            (try? ServiceInstaller(definition: $0).state()).map { $0 != .absent } ?? false
        }
    }

    /// What `install --print` (and `install`) need first: a valid definition and saved settings.
    public func checkInstallable(directory: OctunnelDirectory, profile: ProfileName, role: Role) throws {
        try definition.validate()
        guard try SavedSettings.load(from: directory, profile: profile)?.has(role) == true else {
            throw LocalFileError.noSettings(path: directory.configPath, profile: profile, role: role)
        }
    }

    /// What `uninstall` did: nothing (no file), or removed, with the warning to show first when
    /// the service could not be stopped (it may keep running).
    public enum Removed: Sendable {
        case nothing
        case removed(warning: String?)
    }

    /// Stops the service (as far as the manager can) and removes the file, only octunnel's own
    /// unless `force`.
    public func uninstall(force: Bool) throws -> Removed {
        // The key's rotation goes with the service (its timer first, then its unit).
        for extra in installedRotation().reversed() {
            _ = try ServiceFlow(definition: extra).uninstallOne(force: force)
        }
        return try uninstallOne(force: force)
    }

    /// `uninstall` of this definition's file alone.
    func uninstallOne(force: Bool) throws -> Removed {
        let installer = ServiceInstaller(definition: definition)
        let state = try installer.state()
        guard state != .absent else { return .nothing }
        guard state == .ours || force else {
            throw ServiceError.serviceFileNotOurs(path: definition.path, edited: state == .edited, removing: true)
        }
        let manager = ServiceManager(definition: definition)
        var warning: String?
        if manager.isAvailable {
            do {
                try manager.run(manager.disableCommands)
            } catch {
                warning =
                    "warning: \(error.localizedDescription.replacingOccurrences(of: "the service file is in place: ", with: ""))"
                    + " It may keep running until you stop it."
            }
        } else {
            warning =
                "\(manager.tool) not found on PATH: if the service "
                + "is running, stop it yourself (\(ServiceManager.shown(manager.disableCommands)))"
        }
        _ = try installer.uninstall(force: force)
        if manager.isAvailable { try? manager.run(manager.afterRemovalCommands) }
        return .removed(warning: warning)
    }

    /// `service status`'s rows (label, value): the unit's name, its file and whose it is, and
    /// what the service manager says. Not installed is `serviceNotInstalled`.
    public func status(profile: ProfileName, role: Role) throws -> [(String, String)] {
        let state = try ServiceInstaller(definition: definition).state()
        guard state != .absent else {
            throw ServiceError.serviceNotInstalled(path: definition.path, role: role, profile: profile)
        }
        let whose: String
        switch state {
        case .ours: whose = "written by octunnel"
        case .edited: whose = "written by octunnel, changed since"
        default: whose = "not written by octunnel"
        }
        return [("service", definition.name), ("file", "\(definition.path) (\(whose))")]
            + ServiceManager(definition: definition).describe()
    }
}
