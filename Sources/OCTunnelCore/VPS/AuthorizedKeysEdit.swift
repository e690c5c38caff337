/// The shell functions every edit of authorized_keys on the VPS is made of, shared by the key
/// lines' rotation verbs (`KeyRotationProgram`) and the scripts run through the user's own login
/// (`AuthorizedKeysScript`). Written as the port-reclaim program is: POSIX sh, one statement per
/// entry (joined with `;` onto one line), no `'` and no `!`, every value a client could choose
/// checked before it reaches a command. Variables read: F (the file, relative to $HOME or
/// absolute) and M (words added to the report, `modes=fixed`).
///
/// The functions: `y RESULT [REASON] [MORE]` prints the one report line
/// (`octunnel-keys v=1 result=…`, `AuthorizedKeysReport`) and exits (1 for `refused` and
/// `failed`); `h BLOB` prints the tag of a base64 key blob (`OctunnelKeyLine.tag(for:)`: the
/// first 16 hex digits of its SHA-256); `G` sets the paths (f the file, d its directory, l the
/// lock, c the copy read, n the new content) and refuses a directory that is a symlink; `L`
/// refuses a directory the user cannot write in (`readonly`: a file under /etc, say), then takes
/// the lock (mkdir of `$f.octunnel-lock`: atomic on every filesystem, with a time file `t`
/// written once inside; anything but a directory there, a socket `ssh -R` planted, a file or a
/// link, is not octunnel's lock and is removed at once; one whose `t`, or without one the
/// directory, is older than 60 s is a crashed edit's and is taken over with `rm -rf`, so
/// sockets planted inside neither keep it fresh nor stop its removal; still held after 1 s:
/// `busy`), removed with the temp files on exit, the temp files removed before use; `Q`
/// takes the lock, refuses a file that is a symlink, not a regular file, not
/// the user's, or holds a NUL (awk would cut the line there), copies it to c and notes in e
/// whether it ends in a newline (e=1) or not (0); `C` gives n the file's mode, checks the file
/// is still byte for byte what was read (else `busy`, nothing written: another writer that does
/// not take the lock, an editor, came in between) and moves n over it (rename: a reader sees the
/// old file or the new one, never half of one).
enum AuthorizedKeysEdit {
    static let functions: [String] = [
        #"y(){ echo "octunnel-keys v=1 result=$1${2:+ reason=$2}$3$M";case $1 in refused|failed) exit 1;; esac;exit 0;}"#,
        #"h(){ set -- $(printf %s "$1"|base64 -d 2>/dev/null|sha256sum);printf %.16s "$1";}"#,
        #"G(){ umask 077;e=1;case $F in /*) f=$F;;"# + #" *) f=$HOME/$F;; esac;d=${f%/*} l=$f.octunnel-lock "#
            + #"c=$f.octunnel-old.$$ n=$f.octunnel-new.$$;[ -L "$d" ]&&y refused symlink;}"#,
        #"Z(){ rm -f "$c" "$n";rm -rf "$l" 2>/dev/null;}"#,
        [
            #"L(){ [ -w "$d" ]||y refused readonly;i=0;until mkdir "$l" 2>/dev/null;"#,
            #"do i=$((i+1));[ $i -gt 5 ]&&y refused busy;case $(stat -c %F "$l" "#,
            #"2>/dev/null) in directory) ;; *) rm -f "$l" 2>/dev/null;continue;"#,
            #"; esac;o=$l/t;[ -e "$o" ]||[ -L "$o" ]||o=$l;[ $(($(date +%s)-$(stat "#,
            #"-c %Y "$o" 2>/dev/null||date +%s))) -gt 60 ]&&rm -rf "$l" 2>/dev/null&&continue;"#,
            #"sleep 0.2 2>/dev/null||sleep 1;done;: >"$l/t" 2>/dev/null;trap Z 0;trap "exit 1" 1 2 13 15;rm -f "$c" "$n";}"#,
        ].joined(),
        #"Q(){ L;[ -L "$f" ]&&y refused symlink;[ -f "$f" ]||y refused "#
            + #"notfile;[ -O "$f" ]||y refused owner;cat "$f" >"$c"||y failed "#
            + #"read;tr -d "\000" <"$c"|cmp -s - "$c"||y refused binary;[ -n "$(tail -c 1 "$c")" ]&&e=0;}"#,
        #"C(){ chmod "$(stat -c %a "$f")" "$n"||y failed mode;cmp -s "$c" "$f"||y refused busy;mv -f "$n" "$f"||y failed write;}"#,
    ]
}
