/// What sshd lets a key do beyond its authorized_keys line, closed for one dedicated account (issue
/// 55, finding 5): no key option forbids a Unix-socket listen (`ssh -R /path:…`, OpenSSH's
/// `streamlocal-forward`: `permitlisten` covers TCP only), so a stolen restricted key could plant
/// sockets wherever its user may write. Only sshd's own configuration can, per user: the drop-in
/// `sshd_config.d/octunnel-NAME.conf` holds a `Match User NAME` block with `directives`.
/// `authorize --account NAME` writes it through a root login; without one, `lines` is what an
/// admin adds by hand.
public struct AccountDropIn: Sendable, Equatable {
    /// The account octunnel's keys sign in as.
    public let account: String

    /// Why `name` cannot be an account octunnel creates and names in sshd's configuration, or nil:
    /// a lowercase letter or `_`, then lowercase letters, digits, `_` or `-`, at most 32 bytes.
    public static func problem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        let first =
            bytes.first.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_") } ?? false
        let rest = bytes.dropFirst().allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
        guard first, rest, bytes.count <= 32 else {
            return
                "\"\(OutsideText.shown(name, limit: 64))\" is not an account name octunnel creates: a lowercase letter or _, "
                + "then lowercase letters, digits, _ or -, at most 32 characters (e.g. octunnel)"
        }
        return nil
    }

    /// An account whose name passed `problem`.
    public init?(account: String) {
        guard Self.problem(account) == nil else { return nil }
        self.account = account
    }

    /// The settings of the `Match User` block, as sshd_config writes them, and as `sshd -T` prints
    /// them once they apply (lowercased).
    public static let directives = [
        "AllowStreamLocalForwarding no", "AllowAgentForwarding no", "X11Forwarding no", "PermitTTY no",
        "PermitUserRC no",
    ]

    /// The drop-in's file name in the `sshd_config.d` directory.
    public var fileName: String { "octunnel-\(account).conf" }

    /// The `Match User` block, one line each.
    public var lines: [String] {
        ["Match User \(account)"] + Self.directives.map { "    " + $0 }
    }

    /// The drop-in's whole text.
    public var text: String {
        ([
            "# Written by `octunnel authorize --account \(account)`: what the keys of \(account) may not ask of sshd",
            "# beyond their authorized_keys lines (no option of a key line forbids a Unix-socket forward).",
        ] + lines)
        .joined(separator: "\n") + "\n"
    }

    /// The drop-in directory for sshd's configuration file `config`: `sshd_config.d` beside it
    /// (Debian's and Fedora's `/etc/ssh/sshd_config` Include `/etc/ssh/sshd_config.d/*.conf`).
    public static func directory(forConfig config: String) -> String {
        guard let slash = config.lastIndex(of: "/") else { return "sshd_config.d" }
        return String(config[..<slash]) + "/sshd_config.d"
    }

    /// What is left open without the drop-in, and what an admin adds: said after a plain
    /// `authorize`, and when `--account` meets a login that is not root.
    public static func advice(user: String) -> String {
        let block = (["Match User \(OutsideText.shown(user, limit: 64))"] + directives).joined(separator: " / ")
        return
            "a key of \(OutsideText.shown(user, limit: 64)) may still ask sshd for Unix-socket forwards (`ssh -R /path:…`), "
            + "agent and X11 "
            + "forwarding: no option of a key line forbids them. Close them with `octunnel authorize --account NAME` through a root login, "
            + "or have an admin add to sshd_config (at its top, or in a file its Include names) and reload sshd: \(block)"
    }
}
