/// octunnel's version. `release` is the one place the release number is written: it is bumped,
/// with an entry in docs/CHANGELOG.md, when a capability lands. Every other commit is built as
/// `RELEASE+gitYYYYMMDDHHMMSS.HASH` (scripts/version.sh, stamped at build time by
/// Sources/VersionStamp), so each build sorts after the one before and `apt install` upgrades.
/// `octunnel --version` prints it, and scripts/package.sh names the .deb after what it prints.
public enum OCTunnelVersion {
    /// Major.minor.patch of the last release.
    public static let release = "0.3.0"

    /// This build's Debian version: `release`, or `release+gitYYYYMMDDHHMMSS.HASH` between releases.
    public static let current = OCTunnelBuild.version

    /// What `octunnel --version` prints: the version, then the libssh2 it runs on (the
    /// distribution's, linked dynamically: its security fixes come with the system's updates).
    public static var described: String { "\(current) (libssh2 \(LibSSH2.runningVersion))" }
}
