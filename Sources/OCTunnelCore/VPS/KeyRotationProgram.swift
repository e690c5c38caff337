/// The rotation verbs' side of a key line's forced command (`KeyRotationVerb`): the part of the
/// program both roles' lines start with, so that a key replaces itself in place, with no admin
/// login, as the VPS user, with nothing installed on the VPS.
///
/// The program starts with its parameters, fixed when the line is printed: `K` the line's tag
/// (`OctunnelKeyLine.tag(for:)` of its key), `P` its predecessor's tag (empty for a first key),
/// `A` the day it was added (yyyymmdd, UTC) and `F` the authorized_keys file it lives in
/// (relative to $HOME, or absolute). Then:
/// - `SSH_ORIGINAL_COMMAND` over `maximumCommand` bytes is refused before anything else runs;
/// - `octunnel-rotate-add TAG TYPE BLOB`: the new key, checked (only the characters of its
///   words; exactly four words one space apart; the tag 16 lower-case hex digits and equal to the
///   tag of the blob, base64 that decodes; not this line's own key) before the file is read. Then,
///   under the lock, with the file read once (`AuthorizedKeysEdit`): exactly one line carries
///   `K=<this tag>` in its program, and its key hashes to that tag; the new key has its type,
///   byte for byte, its blob's length and its blob's first 24 characters (the type inside the
///   blob), and neither its blob nor its tag is on any other line. The new line is this line's
///   text with the key's blob, `K`, `P` (this tag) and `A` (today) replaced, the comment kept,
///   written right after this line. A successor (`P=<this tag>`) already there is never replaced
///   (issue 55: a thief's add would take the owner's place, or the owner's the thief's): the same
///   one is `present`, another one `held`, nothing written. The new key found in any other line
///   or tombstone (`x`), or in any other file sshd may read keys from (`O`: every
///   AuthorizedKeysFile of /etc/ssh/sshd_config and sshd_config.d, both default files, every
///   authorized_keys* beside the file) is `held` too: the same answer, so the verb does not tell
///   which keys are authorized elsewhere. A line whose own predecessor (`P`) is still there
///   refuses to add (`pending`): a key's lineage is at most two live lines;
/// - `octunnel-rotate-retire`: replaces this line by its tombstone (`#octunnel-retired K= P= A=`,
///   a comment sshd skips; `AuthorizedKeysScript.revoke` follows a lineage through it), only when
///   exactly one successor of it is there, and names it (`retired successor=<its tag>`);
/// - any other `octunnel-rotate-…`: refused. Anything else falls through to the role's program.
///
/// Names: S the command, V the verb (a add, r retire), T/Y/B the new key's tag, type and blob,
/// D today. `x 0` reads the copy and prints what it found: the number of lines carrying this tag
/// (9 or more: a line that carries it in another shape), that line's key type and blob, the
/// number of successors and the blob of the one, how many other lines hold the new blob or tag,
/// whether the blob's first 24 characters match, and how many lines are this
/// line's predecessor (J); `x 1` prints the new file: every line as it
/// was, joined by the newlines that were there, the file's last newline kept or left out as it
/// was (a line written last always ends in one). awk runs with `LC_ALL=C`: bytes, whatever the
/// locale. In awk, p is the line's parameters (the text between ` -c '` + `K=` and the first
/// `;`: the program has no other `'`), f splits the key off the end of the command (after the
/// first `'" `) into t (type), b (blob) and c (the comment with its space, or a CR).
enum KeyRotationProgram {
    /// The longest `SSH_ORIGINAL_COMMAND` the program looks at: a rotation verb is about 110
    /// bytes, a reclaim verb about 60; anything longer is refused before a command runs.
    static let maximumCommand = 2048

    /// The parameters the program starts with. `file` holds only `OctunnelKeyLine.isSafeFile`'s
    /// characters (no quoting needed, no space, no `;`).
    static func parameters(tag: String?, predecessor: String?, added: String, file: String) -> String {
        "K=\(tag ?? "") P=\(predecessor ?? "") A=\(added) F=\(file)"
    }

    /// The program of a line: its parameters, the length check, the rotation verbs, then `rest`
    /// (the role's own program: `refusal`, or the port-reclaim program).
    static func program(tag: String?, predecessor: String?, added: String, file: String, then rest: String) -> String {
        ([parameters(tag: tag, predecessor: predecessor, added: added, file: file), lengthGuard]
            + AuthorizedKeysEdit.functions + statements + [rest]).joined(separator: ";")
    }

    /// Refuses a command longer than `maximumCommand` (a character count: never more than the bytes).
    static let lengthGuard =
        #"[ ${#SSH_ORIGINAL_COMMAND} -le "# + String(maximumCommand)
        + #" ]||{ echo "octunnel-keys v=1 result=refused reason=long";exit 1;}"#

    /// The laptop line's program after the rotation verbs: anything else is refused, as
    /// `/bin/false` did (a plain login, a command, a subsystem request).
    static let refusal = #"echo "octunnel-keys v=1 result=refused reason=verb";exit 1"#

    /// `O` prints `octunnel-keys-left PATH:LINE` for each line holding the blob B in the other
    /// files sshd may read keys from for the user: every AuthorizedKeysFile of
    /// /etc/ssh/sshd_config and /etc/ssh/sshd_config.d/* (`%h`, `%u`, `%%` expanded, relative ones
    /// under $HOME; every value, a superset of what sshd reads), both default files and every
    /// `authorized_keys*` beside the file f (not f itself, nor octunnel's temp files); only
    /// regular files it can read. The add refuses a key it finds (`held`); revoke names them.
    static let otherFiles = [
        #"O(){ set +f;{ { for p in /etc/ssh/sshd_config /etc/ssh/sshd_config.d/*;"#,
        #"do [ -f "$p" ]&&[ -r "$p" ]&&awk "{s=\$0;sub(/^[ \t]+/,\"\",s);"#,
        #"w=s;sub(/[ \t=].*/,\"\",w);if(tolower(w)==\"authorizedkeysfile\"){s=substr(s,length"#,
        #"(w)+1);sub(/^[ \t]*=?/,\"\",s);print s}}" "$p";done;echo .ssh/authorized_keys "#,
        #".ssh/authorized_keys2;}|U=$(id -un) awk "{for(i=1;i<=NF;i++){p=\$i;"#,
        #"gsub(/%%/,\"\001\",p);gsub(/%h/,ENVIRON[\"HOME\"],p);gsub(/%u/,ENVIRON[\"U\"],p);"#,
        #"gsub(/\001/,\"%\",p);if(p~/^\//)print p;else print ENVIRON[\"HOME\"] "#,
        #"\"/\" p}}";for p in "$d"/authorized_keys* "$HOME"/.ssh/authorized_keys*;"#,
        #"do echo "$p";done;}|awk "s[\$0]++==0"|while IFS= read -r p;"#,
        #"do case $p in "$f"|*.octunnel-*) continue;; esac;[ -f "$p" "#,
        #"]&&[ -r "$p" ]&&awk -v B="$B" -v P="$p" "{s=\$0;gsub(/[\t\r]/,\" "#,
        #"\",s);if(index(\" \" s \" \",\" \" B \" \"))print \"octunnel-keys-left \" P \":\" NR}" "$p";done;}"#,
    ].joined()

    static let statements: [String] = [
        [
            #"R(){ LC_ALL=C;export LC_ALL;M=;S=$SSH_ORIGINAL_COMMAND;set "#,
            #"-f;[ -n "$K" ]||y refused untagged;[ "$(printf %s. "$S"|tr "#,
            #"-d "a-zA-Z0-9+/= -")" = . ]||y refused input;set -- $S;V=r "#,
            #"T= Y= B=;[ "$S" = octunnel-rotate-retire ]||{ [ $# = 4 ]&&[ "#,
            #""$1 $2 $3 $4" = "$S" ]&&[ $1 = octunnel-rotate-add ]||y refused "#,
            #"input;V=a T=$2 Y=$3 B=$4;[ ${#T} = 16 ]||y refused tag;[ "$(printf "#,
            #"%s. "$T"|tr -d 0-9a-f)" = . ]||y refused tag;printf %s "$B"|"#,
            #"base64 -d >/dev/null 2>&1||y refused key;[ "$(h "$B")" = "$T" "#,
            #"]||y refused tag;[ $T = $K ]&&y refused same;};G;Q;D=$(date "#,
            #"-u +%Y%m%d);set -- $(x 0);[ "$1" = 1 ]||y refused own;[ "$(h "#,
            #""$3")" = "$K" ]||y refused own;[ $V = r ]&&{ [ "$4" -ge 1 ]|"#,
            #"|y refused successor;[ "$4" = 1 ]||y refused held;z=$(h "$5");"#,
            #"x 1 >"$n"||y failed write;C;y retired "" " successor=$z";};"#,
            #"[ "$8" = 0 ]||y refused pending;[ "$2" = "$Y" "# + #"]&&[ "$7" = 1 ]||y refused type;[ ${#3} = ${#B} "#
                + #"]||y refused length;[ "$4$5" = "1$B" ]&&y present;"#
                + #"[ "$4$6" = 00 ]||y refused held;[ -z "$(O)" ]||y refused held;x 1 >"$n"||y failed write;C;y added;}"#,
        ].joined(),
        [
            #"x(){ LC_ALL=C awk -v W=$1 -v V=$V -v k=$K -v T="$T" -v Y="$Y" "#,
            #"-v B="$B" -v D="$D" -v e=$e -v J=$P "function p(s,i){i=index(s,\" "#,
            #"-c \047K=\");if(i==0)return \"\";s=substr(s,i+5);i=index(s,\";"#,
            #"\");return i?substr(s,1,i-1):\"\"} function z(s){if(W)printf "#,
            #"\"%s%s\",(m++?\"\n\":\"\"),s;q=0} function f(s,i){i=index(s,\"\047\042 "#,
            #"\");s=substr(s,i+3);i=index(s,\" \");t=substr(s,1,i-1);s=substr(s,i+1);"#,
            #"i=index(s,\" \");if(i){b=substr(s,1,i-1);c=substr(s,i)}else{b=s;"#,
            #"c=\"\"}if(b~/\r\$/){b=substr(b,1,length(b)-1);c=\"\r\"}} BEGIN{n=s=u=v=0;"#,
            #"t=b=o=r=w=\"-\";h=0} {split(p(\$0),a,\" \")} length(J)&&a[1]==\"K=\"J{v++} "#,
            #"a[1]==\"K=\"k{n++;n+=(substr(a[2],1,2)substr(a[3],1,2)substr(a[4],1,2)a[5]==\"P=A=F=\""#,
            #")?0:8;f(\$0);r=t;w=b;h=substr(b,1,24)==substr(B,1,24);if(V==\"r\"){z(\"\043octunnel-re"#,
            #"tired K=\"k\" P=\"J\" A=\"D);next}z(\$0);i=index(\$0,\" -c \047K=\")+4;"#,
            #"g=substr(\$0,i+1);g=substr(g,index(g,\";\"));z(substr(\$0,1,i)\"K=\"T\" "#,
            #"P=\"k\" A=\"D\" \"a[4] substr(g,1,index(g,\"\047\042 \")+2) Y\" "#,
            #"\"B c);q=1;next} a[2]==\"P=\"k{s++;o=\$0;if(V==\"a\"){z(\$0);"#,
            #"next}} V==\"a\"&&(index(\$0,B)||index(\$0,\"K=\"T\" "# + #"\")){u++} {z(\$0)} END{if(W){if(m&&(e||"#
                + #"q))printf \"\n\"}else{if(s==1){f(o);o=b}print n,r,w,s,o,u,h,v}}" "$c";}"#,
        ].joined(),
        otherFiles,
        #"case "$SSH_ORIGINAL_COMMAND" in octunnel-rotate-*) R;; esac"#,
    ]
}
