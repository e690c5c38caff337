/// The `--file` of `authorize`, `keys` and the rotation: where sshd reads authorized_keys on the
/// VPS (its AuthorizedKeysFile; relative paths are from the VPS user's home, as sshd takes them).
/// It is written into the key line's forced command and into the programs run there, so only
/// plain path characters are taken.
public enum AuthorizedKeysPath {
    /// OpenSSH's default AuthorizedKeysFile.
    public static let standard = ".ssh/authorized_keys"

    /// Why `path` cannot be used, or nil: empty, or a character a shell or sshd's option parser
    /// would read as more than a path (quotes, `$`, a backslash, a space, a control character).
    public static func problem(_ path: String) -> String? {
        guard !path.isEmpty else { return "give a path, e.g. \(standard)" }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@%")
        if let bad = path.first(where: { !allowed.contains($0) }) {
            return "\"\(OutsideText.shown(path, limit: 200))\" contains \(HostPort.unicodeName(bad.unicodeScalars.first!)), which octunnel does not write into a key line; use a path of letters, digits and / . _ - + , : @ %"
        }
        if path.hasPrefix("-") { return "a path cannot start with -" }
        return nil
    }
}
