/// octunnel's version: the one place it is written. `octunnel --version` prints it, and
/// scripts/package.sh names the .deb after what the packaged binary prints.
public enum OCTunnelVersion {
    /// Major.minor.patch; a valid Debian upstream version as it stands.
    public static let current = "0.1.0"

    /// What `octunnel --version` prints: the version, then the libssh2 it runs on (the
    /// distribution's, linked dynamically: its security fixes come with the system's updates).
    public static var described: String { "\(current) (libssh2 \(LibSSH2.runningVersion))" }
}
