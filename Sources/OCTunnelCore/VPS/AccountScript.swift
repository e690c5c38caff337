/// The program `authorize --account NAME` runs through a root login (`ssh admin@vps /bin/sh -s`,
/// on stdin): the dedicated account and its sshd drop-in, then the key's line in the account's
/// authorized_keys (`AuthorizedKeysScript.install`, run as the account through `su`).
///
/// In order, each step stopping the program with one `octunnel-account v=1 result=… reason=…` line:
/// root or `notroot`; sshd's binary and configuration readable or `nosshd`; the drop-in written
/// beside the old one (kept as `.old` until checked); `sshd -t` on the whole configuration or the
/// old drop-in put back and `sshdt` (sshd's first complaint on an `octunnel-account-said` line);
/// `sshd -T -C user=NAME,…` showing every directive applied or the old drop-in put back and
/// `notapplied` (the directory is not Included, or an earlier line wins); the account made when
/// missing (`useradd -m -s /bin/sh`, busybox `adduser -D`; password `*`: none, yet not locked, which
/// sshd without PAM refuses) or the drop-in put back and `useradd`; sshd reloaded by SIGHUP to
/// the pid in its PidFile (what `systemctl reload ssh` does), else by `systemctl reload ssh`/`sshd`,
/// else `reload=none` (reloaded even when the drop-in was already so: an earlier run may have been
/// unable to); then
/// `result=ready made=yes|no dropin=new|same reload=pid|systemctl|none`, and the install's own report.
public enum AccountScript {
    /// The program for `dropIn`'s account, sshd's configuration `config` (its drop-in directory
    /// beside it), the sshd binary `sshd`, and the install program for the key's line.
    public static func program(_ dropIn: AccountDropIn, config: String, sshd: String, install: String) -> String {
        let values = [
            "LC_ALL=C;export LC_ALL", "A=" + shellQuote(dropIn.account), "C=" + shellQuote(config),
            "X=" + shellQuote(sshd),
            "D=" + shellQuote(AccountDropIn.directory(forConfig: config)), "F=\"$D\"/" + shellQuote(dropIn.fileName),
            "T=\"$D\"/" + shellQuote(".\(dropIn.fileName).octunnel-new"),
        ]
        let text = dropIn.text.split(separator: "\n").map { "printf '%s\\n' " + shellQuote(String($0)) }
        let write = ["{"] + text + ["} >\"$T\"||r result=failed reason=write"]
        let checks = AccountDropIn.directives.map {
            "printf '%s\\n' \"$E\"|grep -qix " + shellQuote($0) + "||{ back;r result=refused reason=notapplied;}"
        }
        let ready = [
            "echo \"octunnel-account v=1 result=ready made=$M dropin=$S reload=$H\"", "cd /", installCommand,
            install + marker,
        ]
        // The drop-in is checked before the account is made: a refusal leaves nothing changed.
        return (values + prelude + write + swap + checks + account + reload + ready).joined(separator: "\n") + "\n"
    }

    /// The line that ends the install program's here-document.
    static let marker = "OCTUNNEL_ACCOUNT_INSTALL_END"

    private static let installCommand = "su -s /bin/sh \"$A\" -c 'cd&&exec /bin/sh -s' <<'\(marker)'"

    private static let prelude = [
        "r(){ echo \"octunnel-account v=1 $*\";exit 0;}",
        "[ \"$(id -u)\" = 0 ]||r result=refused reason=notroot",
        "[ -x \"$X\" ]&&[ -r \"$C\" ]||r result=refused reason=nosshd",
        "back(){ if [ -f \"$T.old\" ];then mv -f \"$T.old\" \"$F\";else rm -f \"$F\";fi;}",
        "mkdir -p \"$D\"||r result=failed reason=write",
    ]

    private static let account = [
        "M=no",
        "if ! id \"$A\" >/dev/null 2>&1;then",
        " if command -v useradd >/dev/null 2>&1;then",
        "  useradd -m -s /bin/sh \"$A\" </dev/null >/dev/null 2>&1||{ back;r result=failed reason=useradd;}",
        " else adduser -D -s /bin/sh \"$A\" </dev/null >/dev/null 2>&1||{ back;r result=failed reason=useradd;};fi",
        " echo \"$A:*\"|chpasswd -e >/dev/null 2>&1||usermod -p '*' \"$A\" </dev/null >/dev/null 2>&1",
        " M=yes",
        "fi",
    ]

    private static let swap = [
        "rm -f \"$T.old\"",
        "if [ -f \"$F\" ]&&cmp -s \"$T\" \"$F\";then rm -f \"$T\";S=same;else",
        " if [ -f \"$F\" ];then cp -p \"$F\" \"$T.old\"||r result=failed reason=write;fi",
        " mv -f \"$T\" \"$F\"||r result=failed reason=write;S=new",
        "fi",
        "if ! \"$X\" -t -f \"$C\" </dev/null >/dev/null 2>\"$T.err\";then",
        " back;echo \"octunnel-account-said $(head -n 1 \"$T.err\"|tr -d '\\r')\";rm -f \"$T.err\";r result=refused reason=sshdt",
        "fi",
        "rm -f \"$T.err\"",
        "E=$(\"$X\" -T -f \"$C\" -C \"user=$A,host=octunnel.invalid,addr=127.0.0.1\" </dev/null 2>/dev/null)",
    ]

    private static let reload = [
        "rm -f \"$T.old\"",
        "P=$(printf '%s\\n' \"$E\"|awk '$1==\"pidfile\"{print $2}')",
        "I=$([ -n \"$P\" ]&&[ -r \"$P\" ]&&head -n 1 \"$P\")",
        "if [ -n \"$I\" ]&&kill -0 \"$I\" 2>/dev/null&&kill -HUP \"$I\";then H=pid",
        "elif command -v systemctl >/dev/null 2>&1&&",
        " { systemctl reload ssh.service||systemctl reload sshd.service;} </dev/null >/dev/null 2>&1;then H=systemctl",
        "else H=none;fi",
    ]

    /// What comes before sshd's complaint (`reason=sshdt`).
    static let saidPrefix = "octunnel-account-said "

    /// What the program said: its own report and, once ready, the install's.
    public struct Report: Sendable, Equatable {
        public enum Result: String, Sendable { case ready, refused, failed }
        public let result: Result
        public let reason: String?
        /// Whether the account was created now.
        public let made: Bool
        /// Whether the drop-in was written now (`new`) or already so (`same`).
        public let dropIn: String?
        /// How sshd was told: `pid`, `systemctl` or `none`.
        public let reload: String?
        /// sshd's complaint about the configuration (`reason=sshdt`), shown safe.
        public let said: String?

        /// The report in `output`, or nil when there is none.
        public static func parse(_ output: String) -> Report? {
            // isNewline: sshd ends its complaints in CRLF, one Character that is neither "\n" nor "\r".
            let lines = output.split(whereSeparator: \.isNewline).map(String.init)
            let said = lines.first { $0.hasPrefix(saidPrefix) }
                .map { OutsideText.shown(String($0.dropFirst(saidPrefix.count)), limit: 300) }
            guard let line = lines.first(where: { $0.hasPrefix("octunnel-account v=1 ") }) else { return nil }
            var fields: [String: String] = [:]
            for word in line.split(separator: " ").dropFirst(2) {
                guard let equals = word.firstIndex(of: "="), fields[String(word[..<equals])] == nil else { continue }
                fields[String(word[..<equals])] = OutsideText.shown(
                    String(word[word.index(after: equals)...]), limit: 32)
            }
            guard let result = fields["result"].flatMap(Result.init(rawValue:)) else { return nil }
            return Report(
                result: result, reason: fields["reason"], made: fields["made"] == "yes", dropIn: fields["dropin"],
                reload: fields["reload"], said: said)
        }
    }
}
