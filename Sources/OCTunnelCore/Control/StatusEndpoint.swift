import Foundation

/// Where one role and profile's status socket lives: `run/tunnel.sock` (profile `work`:
/// `run/tunnel-work.sock`) in octunnel's home, in a directory only its owner can enter.
public struct StatusEndpoint: Sendable {
    public let directory: OctunnelDirectory
    public let role: Role
    public let profile: ProfileName

    public init(directory: OctunnelDirectory, role: Role, profile: ProfileName) {
        (self.directory, self.role, self.profile) = (directory, role, profile)
    }

    public var path: String { directory.runtimePath(role: role, profile: profile, suffix: ".sock") }

    /// What is found at the socket's path, as both ends judge it: a socket is trusted only if it
    /// is a socket owned by this user and a process accepts on it.
    enum Probe {
        /// Nothing there.
        case absent
        /// Our socket, but nothing accepts on it (its process was killed): safe to replace.
        case stale
        /// A process answers: the connected descriptor (blocking, close-on-exec).
        case answering(OwnedDescriptor)
        /// Something that is not ours, or that cannot be checked: neither used nor removed.
        case untrusted(String)
    }

    /// Looks at the path without following a symlink, then tries to connect.
    func probe() -> Probe {
        let found: FileStatus?
        do { found = try Syscall.fileStatus(path, followingLinks: false) } catch {
            return .untrusted(error.errno.description)
        }
        guard let info = found else { return .absent }
        guard info.kind == .socket else { return .untrusted("it is not a socket") }
        guard info.isOwnedByMe else { return .untrusted("it is owned by uid \(info.owner), not you") }
        switch UnixSocket.connect(path) {
        case .success(let fd): return .answering(fd)
        case .failure(let error) where error.errno == .connectionRefused: return .stale
        case .failure(let error) where error.errno == .noSuchFile: return .absent
        case .failure(let error): return .untrusted(error.description)
        }
    }
}
