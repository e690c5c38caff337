import Foundation

/// octunnel's home directory (keys, known_hosts, config.json), private to its owner.
public struct OctunnelDirectory: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// `--home`, else `$OCTUNNEL_HOME`, else `$XDG_CONFIG_HOME/octunnel`, else `~/.config/octunnel`.
    public static func resolve(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> OctunnelDirectory {
        if let explicit, !explicit.isEmpty { return OctunnelDirectory(path: UserPath.absolute(explicit)) }
        if let home = environment["OCTUNNEL_HOME"], !home.isEmpty {
            return OctunnelDirectory(path: UserPath.absolute(home))
        }
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return OctunnelDirectory(path: UserPath.absolute(xdg) + "/octunnel")
        }
        let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return OctunnelDirectory(path: UserPath.absolute(userHome) + "/.config/octunnel")
    }

    public var privateKeyPath: String { path + "/id_ed25519" }
    public var publicKeyPath: String { path + "/id_ed25519.pub" }
    public var knownHostsPath: String { path + "/known_hosts" }
    public var configPath: String { path + "/config.json" }

    /// Where running octunnel processes keep what others reach them by (status sockets): an
    /// owner-only directory inside the home.
    public var runtimeDirectory: String { path + "/run" }

    /// A per-role, per-profile path in `runtimeDirectory`: `run/tunnel.sock` for the default
    /// profile, `run/tunnel-work.sock` for profile `work` (the same stem as the service unit).
    public func runtimePath(role: Role, profile: ProfileName, suffix: String) -> String {
        runtimeDirectory + "/" + role.instanceName(profile: profile) + suffix
    }

    /// Creates the directory (0700) if needed and makes sure it is the user's and only the
    /// user's: a group- or world-accessible home of the user's is tightened; one that belongs to
    /// anyone else is refused whatever its mode (its owner could swap the files in it, or plant
    /// links where octunnel writes, as OpenSSH's StrictModes refuses a `~/.ssh` of another user).
    /// Returns a note for stderr when it tightened the mode.
    public func prepare() throws -> String? {
        do {
            if try FileBytes.status(path) == nil {
                let parent = (path as NSString).deletingLastPathComponent
                if !parent.isEmpty, try FileBytes.status(parent) == nil {
                    try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
                }
                try Syscall.makeDirectory(path, mode: 0o700, existing: true)
                try? Syscall.changeMode(path, 0o700)
            }
        } catch let error as SystemError {
            throw LocalFileError.cannotWrite(path: path, reason: error.description)
        } catch {
            throw LocalFileError.cannotWrite(path: path, reason: "\(error)")
        }
        return try checkPermissions()
    }

    /// Verifies an existing home without creating it (for read-only commands).
    @discardableResult
    public func checkPermissions() throws -> String? {
        guard let info = try? Syscall.fileStatus(path) else { return nil }
        guard info.kind == .directory else {
            throw LocalFileError.unsafeHome(path: path, reason: "it is not a directory")
        }
        let mode = info.permissions & 0o777
        guard info.isOwnedByMe else {
            throw LocalFileError.unsafeHome(
                path: path,
                reason: "it is owned by uid \(info.owner), not you (uid \(Syscall.effectiveUserID)), "
                    + "who could change the keys in it; use a directory of your own with --home")
        }
        guard mode & 0o077 != 0 else { return nil }
        do {
            try Syscall.changeMode(path, 0o700)
        } catch {
            throw LocalFileError.unsafeHome(
                path: path,
                reason:
                    "it is open to other users (mode \(String(mode, radix: 8))) and chmod 700 failed: \(error.errno)")
        }
        return "tightened \(path) from mode \(String(mode, radix: 8)) to 700: it holds your private key"
    }
}
