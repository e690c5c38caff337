import Foundation

/// The programs octunnel runs on the VPS through the user's own login (`ssh you@vps /bin/sh -s`,
/// the program on stdin, so the login shell, whatever it is, never parses it) to install, list
/// and revoke its authorized_keys lines. Each prints one `AuthorizedKeysReport` line (`list`
/// prints the lines first, each after `listedPrefix`). Every edit goes through
/// `AuthorizedKeysEdit`: the lock, the file read once into a copy, the new content built beside
/// it, the file's mode kept, the file checked unchanged, then renamed over it; every other line
/// byte for byte as it was. Values the scripts take (the file, the line, the blob) are checked
/// here and quoted for the shell; the sshd configuration's path is fixed when the script is
/// rendered (tests point it at their own), never read at run time.
public enum AuthorizedKeysScript {
    /// Where sshd's configuration is read from by `install`.
    public static let sshdConfig = "/etc/ssh/sshd_config"
    /// What `list` prints before each line.
    public static let listedPrefix = "octunnel-keys-line "
    /// The most lines `list` prints (more are counted as `skipped`), each at most `OctunnelKeyLine.longestLine` bytes.
    public static let listLimit = 1000

    /// Installs `line` in `file` (relative to $HOME, or absolute): creates ~/.ssh (0700) and the
    /// file (0600) when missing; makes the home directory, the file's directory and the file
    /// writable by the user only when group or others may write them (sshd's StrictModes refuses
    /// such a file; reported `modes=fixed`); `present` when the line's key blob is already in
    /// the file (any line, octunnel's or not: nothing changed); else appends the line (after a
    /// newline when the file's last line has none). First, sshd's AuthorizedKeysFile (from
    /// `sshdConfig` and the files its `Include`s name, before any `Match`; sshd's default when
    /// absent; not checked when the configuration cannot be read): when it does not name `file`,
    /// `refused reason=elsewhere files=…` and nothing is written. An octunnel line whose `F=` is
    /// not `file`, written the same way, is refused (`reason=file`): its verbs would edit another file.
    public static func install(line: String, file: String, sshdConfig: String = sshdConfig) -> String {
        guard OctunnelKeyLine.isSafeFile(file),
            !line.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\u{7F}" }),
            let blob = blob(of: line)
        else { return refusal("file") }
        // A line whose program edits another file could never rotate from this one.
        if let named = OctunnelKeyLine.parse(line)?.file, named != file { return refusal("file") }
        return script(
            file: file, values: ["B=" + blob, "S=" + shellQuote(sshdConfig), "N=" + shellQuote(line)], body: installBody
        )
    }

    /// Prints `file`'s octunnel lines (by their options: `restrict,port-forwarding,` first and a
    /// `permitopen`/`permitlisten` on the unused port before the command), each after
    /// `listedPrefix`, at most `listLimit` of them and none longer than
    /// `OctunnelKeyLine.longestLine`, then `result=listed lines=N skipped=M` (`absent`: no file).
    /// `listedLines(in:)` reads them back.
    public static func list(file: String) -> String {
        guard OctunnelKeyLine.isSafeFile(file) else { return refusal("file") }
        return script(file: file, values: [], body: listBody)
    }

    /// What `revoke` prints before each line it removed, and before the number of each line it
    /// left that carries the key but is not octunnel's.
    public static let removedPrefix = "octunnel-keys-removed "
    public static let leftPrefix = "octunnel-keys-left "

    /// Removes from `file` the lineage of the key whose tag is `tag` (`OctunnelKeyLine.tag`):
    /// octunnel's lines (as `list` finds them) with `K=<tag>` or the key blob `keyBlob` (base64,
    /// as the line writes it; for an untagged line), then, until none is left, every octunnel
    /// line whose `P=` is the tag of a line removed (its successors, pending or not, and theirs),
    /// all under one lock, so a successor cannot add one of its own in between. Prints each line
    /// removed after `removedPrefix`, the number of each other line holding `keyBlob` (a line of
    /// your own: it stays) after `leftPrefix`, then `PATH:LINE` after it for each line holding it
    /// in the other files sshd may read keys from (`KeyRotationProgram.otherFiles`), then
    /// `revoked removed=N left=M` (M: in `file`), or `absent left=M`.
    public static func revoke(tag: String, keyBlob: String?, file: String) -> String {
        guard OctunnelKeyLine.isSafeFile(file), OctunnelKeyLine.isTag(tag), keyBlob.map(isBase64) ?? true else {
            return refusal("file")
        }
        return script(file: file, values: ["T=" + tag, "B=" + (keyBlob ?? "")], body: revokeBody)
    }

    /// The octunnel lines `list` printed, read with `OctunnelKeyLine.parse` (others dropped),
    /// at most `listLimit`.
    public static func listedLines(in output: String) -> [OctunnelKeyLine] {
        var lines: [OctunnelKeyLine] = []
        // By scalars (a CR before the newline, a CRLF line, is no Character of its own), one line
        // at a time, none longer than a listed line can be.
        let scalars = output.unicodeScalars
        let longest = listedPrefix.utf8.count + OctunnelKeyLine.longestLine
        var start = scalars.startIndex
        while start < scalars.endIndex, lines.count < listLimit {
            let end = scalars[start...].firstIndex(of: "\n") ?? scalars.endIndex
            let slice = scalars[start..<end]
            start = end == scalars.endIndex ? end : scalars.index(after: end)
            guard slice.starts(with: listedPrefix.unicodeScalars), slice.count <= longest else { continue }
            if let line = OctunnelKeyLine.parse(
                String(String.UnicodeScalarView(slice.dropFirst(listedPrefix.unicodeScalars.count))))
            {
                lines.append(line)
            }
        }
        return lines
    }

    /// A script: the locale (bytes), no report words yet, the file and the values, the edit
    /// functions, then the body, one statement a line.
    private static func script(file: String, values: [String], body: [String]) -> String {
        (["LC_ALL=C;export LC_ALL;M=", "F=" + file] + values + AuthorizedKeysEdit.functions + body).joined(
            separator: "\n") + "\n"
    }

    /// A script that only refuses (a value octunnel will not pass to the shell).
    private static func refusal(_ reason: String) -> String {
        "echo \"octunnel-keys v=1 result=refused reason=\(reason)\";exit 1\n"
    }

    /// The key blob of a line (`OctunnelKeyLine.parse`, or a plain key line), if it is base64.
    static func blob(of line: String) -> String? {
        let key = OctunnelKeyLine.parse(line)?.key ?? SSHPublicKey.parse(line: line)
        return key.map { Data($0.blob).base64EncodedString() }.flatMap { isBase64($0) ? $0 : nil }
    }

    /// Base64's characters only, at most 8 KiB.
    static func isBase64(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 8192 && text.utf8.allSatisfy { base64Bytes.contains($0) }
    }

    private static let base64Bytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".utf8)

    /// k prints a configuration file's `AuthorizedKeysFile` (A) and `Include` (I) values, up to
    /// its first `Match` (keywords in any case, `=` allowed as separator); a prints the first
    /// AuthorizedKeysFile of the configuration S and the files its Includes name (relative to its
    /// directory, globs expanded, in order), as sshd takes the first value it reads. Then each of
    /// the value's files, `%%`, `%h` and `%u` expanded and relative ones under $HOME, is compared
    /// with the file to write.
    static let installBody: [String] = [
        #"k(){ awk '{s=$0;sub(/^[ \t]+/,"",s);w=s;sub(/[ \t=].*/,"",w);"#
            + #"v=substr(s,length(w)+1);sub(/^[ \t]*=?[ \t]*/,"",v);"#
            + #"sub(/[ \t\r]+$/,"",v);w=tolower(w)} w=="match"{exit} "#
            + #"w=="authorizedkeysfile"{print "A " v} w=="include"{print "I " v}' "$1" 2>/dev/null;}"#,
        #"a(){ k "$1"|while read -r t v;do [ "$t" = A ]&&{ echo "$v";exit;"#
            + #"};for g in $v;do case $g in /*) ;; *) g=${1%/*}/$g;; esac;for j "#
            + #"in $g;do r=$(k "$j"|awk '/^A /{print substr($0,3);exit}');[ -n "$r" ]&&{ echo "$r";exit;};done;done;done;}"#,
        #"G"#,
        [
            #"[ -r "$S" ]&&{ v=$(a "$S");[ -n "$v" ]||v=".ssh/authorized_keys "#,
            #".ssh/authorized_keys2";U=$(id -un) V=$v T=$f awk 'BEGIN{n=split(ENVIRON["V"],a,""#,
            #" ");for(i=1;i<=n;i++){p=a[i];gsub(/%%/,"\001",p);gsub(/%h/,ENVIRON["HOME"],p);"#,
            #"gsub(/%u/,ENVIRON["U"],p);gsub(/\001/,"%",p);if(substr(p,1,1)=="/")q=p;"#,
            #"else q=ENVIRON["HOME"] "/" p;if(q==ENVIRON["T"])exit 0}exit "#,
            #"1}'||y refused elsewhere " files=$(printf %s "$v"|tr " \t" ,,)";}"#,
        ].joined(),
        #"[ -d "$d" ]||mkdir -m 700 "$d"||y failed mkdir"#,
        #"for x in "$HOME" "$d" "$f";do [ -e "$x" "# + #"]&&[ -O "$x" ]&&{ [ -L "$x" ]||case $(stat "#
            + #"-c %a "$x") in *[2367]?|*[2367]) chmod go-w "$x"&&M=" modes=fixed";; esac;};done"#,
        [
            #"if [ -e "$f" ]||[ -L "$f" ];then Q;awk -v B="$B" '{s=$0;"#,
            #"gsub(/[\t\r]/," ",s);if(index(" " s " "," " B " "))f=1} "#,
            #"END{exit 1-f}' "$c"&&y present;{ cat "$c";[ $e = 1 "#,
            #"]||echo;printf "%s\n" "$N";} >"$n"||y failed write;"#,
            #"C;else L;printf "%s\n" "$N" >"$n"||y failed write;chmod 600 "$n";ln "$n" "$f" 2>/dev/null||y refused busy;fi"#,
        ].joined(),
        #"y added"#,
    ]

    static let listBody: [String] = [
        #"case $F in /*) f=$F;; *) f=$HOME/$F;; esac"#,
        #"[ -e "$f" ]||y absent"#,
        #"[ -f "$f" ]||y refused notfile"#,
        #"awk -v m='="127.0.0.1:1",command="' 'index($0,"restrict,port-forwarding"#
            + #",")==1&&index($0,m){if(length($0)>16384||n>=1000){s++;"#
            + #"next}n++;print "octunnel-keys-line " $0} END{print "#
            + #""octunnel-keys v=1 result=listed lines=" n+0 " skipped=" s+0}' "$f""#,
    ]

    /// x W reads the copy: the octunnel lines (as `list` finds them) with their `K=` and `P=`;
    /// marks the lineage (K is T, or the line holds B; then, to a fixed point, P the K of a
    /// marked line); with W 1 prints the file without them (joined as `KeyRotationProgram`
    /// joins: every other line and newline as it was), with W 0 prints each marked line after
    /// `removedPrefix`, the number of each other line holding B after `leftPrefix`, then the
    /// report's words.
    static let revokeBody: [String] = [
        [
            #"x(){ awk -v W=$1 -v T="$T" -v B="$B" -v e=$e -v m='="127.0.0.1:1",command="' "#,
            #"'function z(s){printf "%s%s",(o++?"\n":""),s} {L[NR]=$0;s=$0;"#,
            #"sub(/\r$/,"",s);gsub(/\t/," ",s);H[NR]=B!=""&&index(s " "," "#,
            #"" B " ")} index($0,"restrict,port-forwarding,")==1&&index($0,m){O[NR]=1;"#,
            #"i=index($0," -c \047K=");if(i){q=substr($0,i+5);j=index(q,";"#,
            #"");q=j?substr(q,1,j-1):"";split(q,a," ");K[NR]=substr(a[1],3);"#,
            #"P[NR]=substr(a[2],3)}} index($0,"\043octunnel-retired K=")==1{O[NR]=1;"#,
            #"split($0,a," ");K[NR]=substr(a[2],3);P[NR]=substr(a[3],3)} "#,
            #"END{R[T]=1;do{c=0;for(i=1;i<=NR;i++)if(O[i]&&!X[i]&&(H[i]||"#,
            #"(K[i]!=""&&K[i] in R)||(P[i]!=""&&P[i] in R))){X[i]=1;c=1;r++;"#,
            #"if(K[i]!="")R[K[i]]=1}}while(c);for(i=1;i<=NR;i++){if(W){if(!X[i])z(L[i])}else "#,
            #"if(X[i])print "octunnel-keys-removed " L[i];"# + #"else if(H[i]){u++;print "octunnel-keys-left "#
                + #"" i}}if(W){if(o&&e)printf "\n"}else print " removed=" r+0 " left=" u+0}' "$c";}"#,
        ].joined(),
        #"G"#,
        #"Q"#,
        #"x 0 >"$l/r"||y failed write"#,
        KeyRotationProgram.otherFiles,
        #"w=$(tail -n 1 "$l/r");case $w in " removed=0 "*) "#
            + #"grep -v "^ removed=" "$l/r";[ -z "$B" ]||O;y absent "" "${w# removed=0}";; esac"#,
        #"x 1 >"$n"||y failed write"#,
        #"C"#,
        #"grep -v "^ removed=" "$l/r""#,
        #"[ -z "$B" ]||O"#,
        #"y revoked "" "$w""#,
    ]
}
