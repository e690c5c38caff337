/// The `--file` of `authorize` and `keys`: where sshd reads authorized_keys on the VPS (its
/// AuthorizedKeysFile; relative paths are from the VPS user's home, as sshd takes them). It is
/// written into the key line's forced command and into the programs run there, so only what
/// `OctunnelKeyLine.isSafeFile` takes is taken: the rule is the VPS side's, said here as a
/// usage error.
public enum AuthorizedKeysPath {
    /// OpenSSH's default AuthorizedKeysFile.
    public static let standard = OctunnelKeyLine.defaultFile

    /// Why `path` cannot be used, or nil.
    public static func problem(_ path: String) -> String? {
        guard !path.isEmpty else { return "give a path, e.g. \(standard)" }
        if path.hasPrefix("-") { return "a path cannot start with -" }
        guard OctunnelKeyLine.isSafeFile(path) else {
            return "\"\(OutsideText.shown(path, limit: 200))\" is not a path octunnel "
                + "writes into a key line: use letters, digits and / . _ - only, at most 255 bytes"
        }
        return nil
    }
}
