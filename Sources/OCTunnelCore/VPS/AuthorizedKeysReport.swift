/// The one line the VPS's key programs print (the rotation verbs of a key line,
/// `KeyRotationProgram`, and the scripts of `AuthorizedKeysScript`), parsed:
/// `octunnel-keys v=1 result=added`, `octunnel-keys v=1 result=refused reason=duplicate`,
/// `octunnel-keys v=1 result=added modes=fixed`, `octunnel-keys v=1 result=listed lines=2 skipped=0`,
/// `octunnel-keys v=1 result=refused reason=elsewhere files=.ssh/authorized_keys2`.
/// The VPS wrote it: every value is shown only through `OutsideText.shown`, and only the first
/// `longestLine` bytes of a line and the first `linesRead` lines are looked at.
public struct AuthorizedKeysReport: Equatable, Sendable {
    /// What the program did.
    public enum Result: String, Sendable {
        /// The line is in the file now (install; add: the new key's line, right after the old one's).
        case added
        /// The key was in the file already: nothing written.
        case present
        /// The old key's line is gone, its successor stays (retire).
        case retired
        /// The key's octunnel line(s) are gone (revoke).
        case revoked
        /// No octunnel line carries that key (revoke), or there is no file (list).
        case absent
        /// The file's octunnel lines were printed before this line (list).
        case listed
        /// Nothing was written: `reason` says why.
        case refused
        /// A step failed (`reason`: read, write, mode, mkdir); the file is as it was.
        case failed
    }

    public let result: Result
    /// One word (`AuthorizedKeysReport.summary` words them), cleaned.
    public let reason: String?
    /// Modes sshd's StrictModes would refuse (home, ~/.ssh or the file writable by group or
    /// others) were fixed (`chmod go-w`).
    public let modesFixed: Bool
    /// For `reason=elsewhere`: the files sshd reads keys from (AuthorizedKeysFile), comma-separated, cleaned.
    public let files: String?
    /// For `listed`: the lines printed, and those left out (longer than `OctunnelKeyLine.longestLine`, or past the thousandth).
    public let lines: Int?
    public let skipped: Int?
    /// For `retired`: the tag of the one successor that stays (the rotation checks it is the new key's).
    public let successor: String?
    /// For `revoked` and `absent` (revoke): the lines removed, and the lines left that carry the key but are not octunnel's.
    public let removed: Int?
    public let left: Int?

    /// The longest line looked at, and how many lines are: a report line is under 300 bytes.
    static let longestLine = 4096
    static let linesRead = 2000

    /// Finds the report line in a command's output; nil when there is none (an older line:
    /// `/bin/false` prints nothing; a shell that does not know the verb).
    public static func parse(_ output: String) -> AuthorizedKeysReport? {
        // By scalars: a CRLF is one Character, and a listed line may end in CR. One line at a
        // time: a list's output may hold a thousand long lines before its report.
        let scalars = output.unicodeScalars
        var start = scalars.startIndex
        var seen = 0
        while start < scalars.endIndex, seen < linesRead {
            let end = scalars[start...].firstIndex(where: { $0 == "\n" || $0 == "\r" }) ?? scalars.endIndex
            let slice = scalars[start..<end]
            start = end == scalars.endIndex ? end : scalars.index(after: end)
            guard !slice.isEmpty else { continue }
            seen += 1
            guard slice.count <= longestLine else { continue }
            let line = String(String.UnicodeScalarView(slice))
            guard line.hasPrefix("octunnel-keys ") else { continue }
            var fields: [String: String] = [:]
            for word in line.split(separator: " ").dropFirst() {
                guard let equals = word.firstIndex(of: "=") else { continue }
                let name = String(word[..<equals])
                guard fields[name] == nil else { continue }
                fields[name] = OutsideText.shown(
                    String(word[word.index(after: equals)...]), limit: name == "files" ? 200 : 100)
            }
            guard fields["v"] == "1", let result = fields["result"].flatMap(Result.init(rawValue:)) else { continue }
            return AuthorizedKeysReport(
                result: result, reason: fields["reason"], modesFixed: fields["modes"] == "fixed",
                files: fields["files"], lines: fields["lines"].flatMap { Int($0) },
                skipped: fields["skipped"].flatMap { Int($0) }, successor: fields["successor"],
                removed: fields["removed"].flatMap { Int($0) }, left: fields["left"].flatMap { Int($0) })
        }
        return nil
    }

    /// Whether the file now holds what was asked for (the line is there, the old one gone, the key gone).
    public var succeeded: Bool {
        switch result {
        case .added, .present, .retired, .revoked, .absent, .listed: return true
        case .refused, .failed: return false
        }
    }

    /// One clause for messages: what happened on the VPS, and for a refusal, why.
    public var summary: String {
        let fixed =
            modesFixed
            ? " (and made the home directory, ~/.ssh and the file writable by you only, as sshd requires)" : ""
        switch result {
        case .added: return "the line was added to authorized_keys" + fixed
        case .present: return "the key was already in authorized_keys: nothing changed" + fixed
        case .retired: return "the old key's line was removed; its successor stays"
        case .revoked: return "the key's octunnel line(s) and their successors were removed"
        case .absent:
            return lines == nil
                ? "no octunnel line carries that key: nothing changed" : "there is no authorized_keys file"
        case .listed:
            return "\(lines ?? 0) octunnel line(s)"
                + ((skipped ?? 0) > 0 ? ", \(skipped ?? 0) left out (too long or too many)" : "")
        case .failed:
            return
                "the VPS could not \(Self.failures[reason ?? ""] ?? "finish (\(reason ?? "?"))"): authorized_keys is as it was"
        case .refused where reason == "elsewhere":
            return "refused: sshd reads keys only from \((files ?? "?").replacingScalars(",", with: ", "))"
                + " (AuthorizedKeysFile in sshd_config); authorized_keys is as it was"
        case .refused:
            return "refused: " + (Self.refusals[reason ?? ""] ?? "\(reason ?? "no reason given")")
                + "; authorized_keys is as it was"
        }
    }

    private static let failures: [String: String] = [
        "read": "read authorized_keys", "write": "write the new authorized_keys",
        "mode": "give the new file the old one's mode",
        "mkdir": "create ~/.ssh",
    ]

    private static let refusals: [String: String] = [
        "long": "the command was longer than a rotation verb can be",
        "verb": "the key's line runs no command but its own verbs",
        "input": "the command was not one the line knows, or not in its form",
        "tag": "the new key's tag is not the one of its key",
        "key": "the new key is not valid base64",
        "same": "the new key is the old key",
        "untagged":
            "the line carries no tag (printed without its key, or by an older octunnel): install the new key with your own login",
        "own":
            "the line that runs this command is not the one line with its tag, or its key does not match its tag (edited by hand?)",
        "type": "the new key is not of the old key's type",
        "length": "the new key's length is not the old key's",
        "duplicate": "the new key is already in another line of authorized_keys",
        "held": "another key already holds this key's succession (someone else holds this key: "
            + "revoke it from your own login)",
        "successor": "no successor of this key's line is there yet (add the new key first)",
        "pending":
            "the line this key replaced is still there: retire it with the older key first (or revoke it with your own login)",
        "symlink": "authorized_keys or its directory is a symbolic link",
        "notfile": "authorized_keys is not a regular file",
        "owner": "authorized_keys belongs to another user",
        "binary": "authorized_keys holds a NUL byte",
        "busy": "authorized_keys is being changed by something else (try again)",
        "readonly": "you cannot write in the directory of authorized_keys",
        "elsewhere": "sshd does not read keys from that file",
        "file": "the file name or the line is not one octunnel writes",
    ]
}
