import Foundation

/// Writes and removes a service file, only ever its own: a file octunnel did not write, or that
/// was changed since, is left alone unless `force` says otherwise.
public struct ServiceInstaller: Sendable {
    public let definition: ServiceDefinition

    public init(definition: ServiceDefinition) { self.definition = definition }

    /// What is at the file's path now.
    public enum FileState: String, Sendable {
        case absent
        /// Written by octunnel and unchanged.
        case ours
        /// Written by octunnel, then changed.
        case edited
        /// Not written by octunnel (or not a regular file).
        case foreign
    }

    public enum InstallOutcome: Sendable { case created, replaced, unchanged }

    public func state() throws -> FileState {
        let read: (info: FileStatus, bytes: [UInt8])?
        do { read = try FileBytes.readWithStatus(definition.path) } catch {
            throw LocalFileError.cannotRead(path: definition.path, reason: error.description)
        }
        guard let read else { return .absent }
        guard read.info.kind == .regular else { return .foreign }
        switch ServiceFileMark.verdict(of: String(decoding: read.bytes, as: UTF8.self)) {
        case .ours: return .ours
        case .edited: return .edited
        case .foreign: return .foreign
        }
    }

    /// Writes the file atomically (0644), creating its directory (and a LaunchAgent's log directory).
    public func install(force: Bool) throws -> InstallOutcome {
        let text = definition.render()
        let state = try state()
        if !force && (state == .edited || state == .foreign) {
            throw ServiceError.serviceFileNotOurs(path: definition.path, edited: state == .edited, removing: false)
        }
        var directories = [definition.directory]
        if definition.format == .launchd { directories.append(definition.logDirectory) }
        for directory in directories {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw LocalFileError.cannotWrite(path: directory, reason: (error as NSError).localizedDescription)
            }
        }
        if state == .ours, (try? FileBytes.read(definition.path)) == Array(text.utf8) { return .unchanged }
        do {
            if state == .absent {
                try AtomicFile.create(Array(text.utf8), at: definition.path, mode: 0o644)
            } else {
                try AtomicFile.write(Array(text.utf8), to: definition.path, mode: 0o644)
            }
        } catch {
            if error.errno == .fileExists {
                throw ServiceError.serviceFileNotOurs(path: definition.path, edited: false, removing: false)
            }
            throw LocalFileError.cannotWrite(path: definition.path, reason: error.description)
        }
        return state == .absent ? .created : .replaced
    }

    /// Removes the file (and a systemd enablement link to it); false when there was none.
    @discardableResult
    public func uninstall(force: Bool) throws -> Bool {
        let state = try state()
        if state == .absent { return false }
        if !force && state != .ours {
            throw ServiceError.serviceFileNotOurs(path: definition.path, edited: state == .edited, removing: true)
        }
        do { try Syscall.removeFile(definition.path) } catch {
            throw LocalFileError.cannotWrite(path: definition.path, reason: error.errno.description)
        }
        if definition.format == .systemd { removeEnablementLink() }
        return true
    }

    /// `systemctl enable` links `default.target.wants/NAME` to the unit; a link left pointing at
    /// the removed file (the manager was unreachable) goes too. Nothing else is touched.
    private func removeEnablementLink() {
        guard let target = definition.wantedBy else { return }
        let link = definition.directory + "/\(target).wants/" + definition.name
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link) else { return }
        let resolved =
            target.hasPrefix("/")
            ? target : ((link as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)
        if (resolved as NSString).standardizingPath == (definition.path as NSString).standardizingPath {
            try? Syscall.removeFile(link)
        }
    }
}
