import OCTunnelLibc

/// What `stat(2)` says of a file, typed (swift-system's `FileDescriptor` model): its kind, owner,
/// permission bits and size, so no `st_mode` or `S_IF…` is read above System/
/// (SyscallSeamTests checks it).
public struct FileStatus: Sendable, Equatable {
    /// What the file is.
    public enum Kind: Sendable, Equatable {
        case regular, directory, symbolicLink, socket, fifo, characterDevice, blockDevice, other

        /// "a FIFO", "a character device", …: how a message names it.
        public var described: String {
            switch self {
            case .regular: return "a regular file"
            case .directory: return "a directory"
            case .fifo: return "a FIFO"
            case .characterDevice: return "a character device"
            case .blockDevice: return "a block device"
            case .socket: return "a socket"
            case .symbolicLink: return "a symbolic link"
            case .other: return "not a regular file"
            }
        }
    }

    public let kind: Kind
    /// Its owner's user id.
    public let owner: UInt32
    /// Its permission bits (`0o600`; setuid, setgid and sticky included).
    public let permissions: UInt16
    /// Its size in bytes.
    public let size: Int

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .other
        }
        owner = UInt32(info.st_uid)
        permissions = UInt16(info.st_mode & 0o7777)
        size = Int(info.st_size)
    }

    /// Whether the user running octunnel owns it (the effective user).
    public var isOwnedByMe: Bool { owner == UInt32(Syscall.effectiveUserID) }

    /// Whether its group or others may read, write or run it (mode & 077).
    public var isOpenToOthers: Bool { permissions & 0o077 != 0 }

    /// Whether its group or others may write it (mode & 022).
    public var isWritableByOthers: Bool { permissions & 0o022 != 0 }
}
