import Foundation

/// The home key's forced command (`pubkey --restrict --listen`): a short POSIX-sh program that
/// lets `home up` take back the VPS port a dead session of its own still holds, with a stock
/// sshd, as the VPS user, with nothing installed there.
///
/// Verbs (`SSH_ORIGINAL_COMMAND`, nothing else is read from the client; a verb may name one
/// of the line's listens, `program(listens:)`): `octunnel-reclaim`
/// and `octunnel-inspect` (read only); `octunnel-mark` and `octunnel-beat` (a `cat` that marks
/// the listening session, with or without a heartbeat). Anything else prints a `result=refused` line and exits 1,
/// as `/bin/false` did. What it does, from /proc only (`/proc/net/tcp{,6}`, `/proc/PID/fd`,
/// `/proc/PID/status`): finds the socket listening on the one address:port baked in, the one
/// process holding it, and that process's client connection; it ends the process only if it is
/// an sshd session of this user, not the caller's own, and it is dead by the rules in
/// `deadRule` (its client connection, or its heartbeat, `beatVerb`). It prints one line,
/// parsed by `PortReclaimReport`. On the key's line it runs after the line's parameters and
/// rotation verbs (`OctunnelKeyLine.forcedCommand`, `KeyRotationProgram`), which take only an
/// over-long command and `octunnel-rotate-…` and leave everything else to it, as it was.
public enum PortReclaimProgram {
    /// The verb `home up` sends when its listen is refused.
    public static let reclaimVerb = "octunnel-reclaim"
    /// The read-only verb: what holds the port, nothing provoked or ended.
    public static let inspectVerb = "octunnel-inspect"
    /// The verb `home up` runs once listening, for the life of its session: a `cat` that
    /// reads nothing, whose environment (`OCTUNNEL_LISTEN`, `SSH_CONNECTION`) and parent tell
    /// a later reclaim which sshd session listens and from where, where /proc/PID/fd cannot:
    /// a non-root user cannot read sshd's session processes (they changed uid, so the kernel
    /// made them non-dumpable).
    public static let markVerb = "octunnel-mark"

    /// The verb `home up` runs once listening, in place of `markVerb` (which it falls back to
    /// when an older key line refuses this one): the same mark, marked `beat`, whose stdin
    /// `home up` writes one byte every `heartbeatInterval` seconds for the life of the session.
    /// The mark's `cat` reads them, so the read counter in its `/proc/PID/io` (`rchar`; the
    /// `cat` runs as the VPS user, so it is readable where sshd's session is not) moves while the
    /// home lives, wherever sshd's TCP peer is (a relay such as sslh acknowledges for a dead home).
    public static let beatVerb = "octunnel-beat"

    /// Seconds between two heartbeats on the `beatVerb` channel.
    public static let heartbeatInterval = 2.0

    /// Seconds the program watches a heartbeat holder without seeing its counter move before it
    /// takes it for dead: 3 heartbeats missed in a row. docs/security.md says why.
    public static let heartbeatSilence = 6

    /// The rule for "dead", as the program applies it to the holder's client connection
    /// (/proc/net/tcp): unacknowledged bytes (`tx_queue` > 0) under the retransmission timer
    /// (`tr` 1) that the kernel has already resent at least three times in a row (`retrnsmt`
    /// >= 3, RFC 1122's R1 threshold, Linux's `tcp_retries1`). docs/security.md says why.
    /// A holder whose session runs `beatVerb` is also dead when its heartbeat stays away for
    /// `heartbeatSilence` seconds of watching, and live only by its heartbeat (a relay in front
    /// of sshd acknowledges everything, so acknowledgements prove nothing there).
    public static let deadRule = "tx_queue > 0, timer 1 (retransmit), retrnsmt >= 3"

    /// The program for listens on `listens` (as `home up` asks for them: 127.0.0.1, ::1,
    /// localhost, or another literal address). A verb alone is for the first listen (OpenCode's,
    /// and the only one a line printed before several forwards knew); `VERB ADDRESS:PORT` (the
    /// address as `HostPort` writes it, `[::1]:18081`) is for that listen, and any other
    /// address is refused. `procRoot` and `heartbeatSilence` are for tests that run it against
    /// a recorded /proc tree; they are fixed when the line is printed, never read at run time.
    public static func program(
        listens: [HostPort], procRoot: String = "/proc", heartbeatSilence: Int = heartbeatSilence
    ) -> String {
        let first = listens.first ?? HostPort(host: Defaults.remoteHost, port: Defaults.remotePort)
        // Which listen: the words after the verb, compared whole with each baked-in address,
        // quoted (`[::1]` is no pattern there); nothing from the client is run or expanded.
        let arms = listens.enumerated().map { index, listen in
            (index == 0 ? "\"\"|" : "") + "\"\(listen)\") \(parameters(listen));;"
        }
        let select = #"S=$SSH_ORIGINAL_COMMAND;V=${S%% *};X=;[ "$V" = "$S" ]||X=${S#* }"#
        let choose =
            "case \"$X\" in " + arms.joined(separator: " ")
            + " *) echo \"octunnel-reclaim v=1 result=refused port=\(first) reason=listen\";exit 1;; esac"
        // Every listen's port: a holder's connections accepted on any of them are its clients', not its own.
        let ports = " " + listens.map { hexPort($0.port) }.joined(separator: " ") + " "
        return (["P=\(procRoot) O=\(heartbeatSilence * 100) T= g=\"\(ports)\"", select, choose] + body).joined(
            separator: ";")
    }

    /// `program(listens: [listen])`: the line of a home with one forward.
    public static func program(
        listen: HostPort, procRoot: String = "/proc", heartbeatSilence: Int = heartbeatSilence
    ) -> String {
        program(listens: [listen], procRoot: procRoot, heartbeatSilence: heartbeatSilence)
    }

    /// One listen's parameters: W the listen as text, L its /proc forms, each quoted, so the
    /// shell takes the host as written (a `~` there would be a home directory).
    static func parameters(_ listen: HostPort) -> String {
        let port = hexPort(listen.port)
        // A listener on all addresses (0.0.0.0, ::) takes the port from a loopback listen too.
        var addresses = hexAddresses(listen.host)
        for any in ["00000000", String(repeating: "0", count: 32)] where !addresses.contains(any) {
            addresses.append(any)
        }
        let local = " " + addresses.map { "\($0):\(port)" }.joined(separator: " ") + " "
        return "W=\"\(listen)\" L=\"\(local)\""
    }

    /// A port as /proc/net/tcp prints it: four upper-case hex digits.
    private static func hexPort(_ port: Int) -> String {
        let hex = String(port, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The verb `home up` sends for `listen`, the `index`th of its forwards: the verb alone for
    /// the first (as every line understands it), `VERB ADDRESS:PORT` for the others.
    public static func command(_ verb: String, listen: HostPort, index: Int) -> String {
        index == 0 ? verb : "\(verb) \(listen)"
    }

    /// How a listen address appears in /proc/net/tcp (IPv4: 8 hex digits of the address as
    /// the kernel stores it, little-endian on every Linux that runs a VPS) and tcp6 (four such
    /// words). `localhost` is both loopbacks (sshd binds both); an empty host or `*` is any.
    static func hexAddresses(_ host: String) -> [String] {
        switch host {
        case "localhost": return hexAddresses("127.0.0.1") + hexAddresses("::1")
        case "", "*", "0.0.0.0": return ["00000000"]
        case "::": return [String(repeating: "0", count: 32)]
        default: break
        }
        return Syscall.addressBytes(host).map { [hexWords($0)] } ?? []
    }

    /// Each 4-byte group as the kernel prints it: `%08X` of the host-order word, so its bytes reversed.
    private static func hexWords(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: bytes.count, by: 4).map { start in
            bytes[start..<start + 4].reversed().map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return hex.count == 1 ? "0" + hex : hex
            }.joined()
        }.joined()
    }

    /// The program after its parameters, one statement per entry (joined with `;`, so the whole
    /// fits on one authorized_keys line). No `'` (it is wrapped in them) and no `!` (csh).
    /// Names: P proc root, V the verb, X the listen asked for (empty: the first), W that listen
    /// as text, L its /proc forms, g the port of every listen of the line in hex (a holder's
    /// connections accepted on any of them are not its client connection), T the
    /// tcp tables, I/U the listener's inode and owner, Q the holder's pid, S its socket inodes,
    /// C/X/R/E/B its client connection's peer, tx_queue, timer, retransmissions, and the
    /// seconds it has been resending at least: the RTO shown (field 13, already doubled at
    /// each retransmission) times 1 - 2^-retransmissions, plus what of it has passed (RTO
    /// minus the timer's time left), in USER_HZ (1/100 s) ticks. O is the heartbeat's silence in
    /// 1/100 s, M the holder's `octunnel-beat` mark (its child, a `cat`), J and j its `rchar`
    /// when first and last read, t and u the clock then (the real /proc/uptime in 1/100 s,
    /// whatever P is: monotonic, unlike the wall clock); the report's `beat` is the seconds
    /// watched without a heartbeat (0 when one came). b counts the rounds in a row in which the
    /// holder's client connection was not one (`c` printed `-`): the holder ended in between
    /// (then the listener is gone too: free), or the table changed under its read; each such
    /// round waits 0.2 s before it looks for the listener and 0.2 s after, and five of them
    /// (about 2 s) make it `unproven`, asked again on the caller's next retry.
    ///
    /// Environments (marks): `e` prints /proc/PID/environ one variable a line, newlines inside
    /// values turned into \001 and the NULs between variables into newlines, so a value (an
    /// `LC_*` the client sent, which Debian's sshd accepts, may hold a newline) can never pass
    /// for a variable of its own. A mark is a whole line equal to `OCTUNNEL_LISTEN=$W;` (or
    /// `;beat`), matched as a fixed string (`grep -xF`: `[::1]` is no character class);
    /// `grep -l OCTUNNEL_LISTEN=` only picks the files worth reading (busybox's `grep -F` stops
    /// at a line's first NUL, its regular expressions do not). `SSH_CONNECTION` is the first line named
    /// so, and the only one: sshd sets it (session.c `do_setup_env`) after the client's
    /// accepted variables, the key's `environment=` and sshd_config's `SetEnv`, and
    /// `child_set_env` (misc.c) overwrites a variable of the same name in its slot, so the
    /// value there is always sshd's own.
    private static let body: [String] = [
        #"for f in $P/net/tcp $P/net/tcp6;do [ -r $f ]&&T="$T $f";done"#,
        #"o(){ echo "octunnel-reclaim v=1 result=$1 port=$W$2";exit 0;}"#,
        #"e(){ tr "\n\000" "\001\n" <$1 2>/dev/null;}"#,
        #"case "$V" in octunnel-reclaim) A=r;; octunnel-inspect) "#
            + #"A=i;; octunnel-mark) export OCTUNNEL_LISTEN="$W;";exec "#
            + #"cat >/dev/null;; octunnel-beat) export OCTUNNEL_LISTEN="$W;"#
            + #"beat";exec cat >/dev/null;; *) echo "octunnel-reclaim v=1 result=refused port=$W reason=verb";exit 1;; esac"#,
        [
            #"F="function h(s,i,n){n=0;s=toupper(s);for(i=1;i<=length(s);i++)n=n*16+index(\"0123456"#,
            #"789ABCDEF\",substr(s,i,1))-1;return n} function a(s,x,p,r,i,w){split(s,x,\":\");"#,
            #"p=h(x[2]);s=x[1];if(substr(s,1,24)==\"0000000000000000FFFF0000\")s=substr(s,25);"#,
            #"if(length(s)==8)return h(substr(s,7,2))\".\"h(substr(s,5,2))\".\"h(substr(s,3,2))\".\"#,
            #""h(substr(s,1,2))\":\"p;r=\"\";for(i=0;i<4;i++){w=substr(s,i*8+1,8);"#,
            #"r=r sprintf(\"%x:%x\",h(substr(w,7,2)substr(w,5,2)),h(substr(w,3,2)substr(w,1,2)))(i<"#,
            #"3?\":\":\"\")}return \"[\"r\"]:\"p}""#,
        ].joined(),
        #"l(){ awk -v L="$L" "\$4==\"0A\"&&index(L,\" \"\$2\" \"){print \$10,\$8;exit}" $T;}"#,
        #"set -- $(l);[ -n "$1" ]||o free"#,
        #"I=$1 U=$2"#,
        #"set -- $(ls -l $P/[0-9]*/fd 2>/dev/null|awk -v P="$P/" -v I="socket:[$I]" "#
            + #""index(\$0,P)==1&&/\/fd:\$/{p=substr(\$0,length(P)+1);sub(\"/fd:\$\",\"\",p);"#
            + #"next} \$NF~/^socket:/{s[p]=s[p]\" \"substr(\$NF,9,length(\$NF)-9);"#
            + #"if(\$NF==I)q[p]=1} END{n=0;for(p in q){n++;r=p}if(n==1)print n,r,s[r];else print n}")"#,
        #"x=$$ Y=" ";while [ "${x:-0}" -gt 1 ];do Y="$Y$x ";x=$(awk "/^PPid:/{print \$2}" $P/$x/status 2>/dev/null);done"#,
        #"[ "$1" = 1 ]||[ "$1$U" = "0$(id -u)" ]||o unseen " uid=$U holders=$1""#,
        [
            #"if [ "$1" = 1 ];then Q=$2;shift 2;S=" $* " K= Z=;else G=0;"#,
            #"for f in $(grep -l OCTUNNEL_LISTEN= $P/[0-9]*/environ 2>/dev/null);"#,
            #"do e $f|grep -qxF -e "OCTUNNEL_LISTEN=$W;" -e "OCTUNNEL_LISTEN=$W;"#,
            #"beat"||continue;m=${f%/environ};m=${m##*/};q=$(awk "/^PPid:/{print "#,
            #"\$2}" $P/$m/status 2>/dev/null);case "$Y" in *" $q "*) "#,
            #"continue;; esac;G=$((G+1));Q=$q;V=$(e $f|awk "/^SSH_CONNECTION=/{print "#,
            #"substr(\$0,16);exit}");done;[ $G = 1 ]||o unseen " uid=$U "#,
            #"holders=0 marks=$G";set -- $V;case "$1" in *:*) v=;; *) v=$1;; esac;K="$(printf %04X "$4") $2 $v" S= Z=" via=mark";fi"#,
        ].joined(),
        #"N=$(awk "/^Name:/{print \$2}" $P/$Q/status);R=$(awk "/^Uid:/{print \$2}" $P/$Q/status)"#,
        #"case "$N" in sshd|sshd-session) ;; *) o other " pid=$Q name=${N:-?} uid=$U";; esac"#,
        #"[ "$R" = "$(id -u)" ]||o other " pid=$Q name=$N uid=$R""#,
        #"case "$Y" in *" $Q "*) o own " pid=$Q";; esac"#,
        #"M=;for f in $(grep -l OCTUNNEL_LISTEN= $P/[0-9]*/environ 2>/dev/null);"#
            + #"do e $f|grep -qxF "OCTUNNEL_LISTEN=$W;beat"||continue;m=${f%/environ};"#
            + #"m=${m##*/};[ "$(awk "/^PPid:/{print \$2}" $P/$m/status 2>/dev/null)" = "$Q" ]&&M=$m;done"#,
        [
            #"c(){ awk -v S="$S" -v H="$g" -v K="$K" "$F \$4==\"01\"{split(\$2,x,\":\");"#,
            #"M=index(S,\" \"\$10\" \")&&(index(H,\" \"x[2]\" \")?0:1);if(K){split(K,k,\" "#,
            #"\");r=a(\$3);z=r;sub(/.*:/,\"\",z);M=x[2]==k[1]&&z==k[2]&&(k[3]==\"\"|"#,
            #"|index(r,k[3]\":\")==1)}if(M){split(\$5,t,\":\");split(\$6,m,\":\");"#,
            #"n++;c=r=a(\$3);e=h(\$7);q=\$13;w=h(m[2]);g=0;if(h(m[1])==1&&e>0){p=1;"#,
            #"for(j=0;j<e&&j<30;j++)p*=2;g=q*(1-1/p)+(q>w?q-w:0)};k0=c\" "#,
            #"\"h(t[1])\" \"h(m[1])\" \"e\" \"int(g/100)}} END{if(n==1)print k0;else print \"-\",n+0}" $T;}"#,
        ].joined(),
        #"k(){ case "$W" in \[*) w=${W#[};w=${w%%]*};"#
            + #"; *) w=${W%:*};; esac;bash -c "exec 3<>/dev/tcp/$w/${W##*:}" "#
            + #"2>/dev/null||nc -w 1 "$w" "${W##*:}" </dev/null >/dev/null 2>&1;}"#,
        #"n=0 s=0 z=0 b=0"#,
        [
            #"while :;do set -- $(c);[ "$1" = - ]&&{ b=$((b+1));sleep 0.2 "#,
            #"2>/dev/null||sleep 1;[ -n "$(l)" ]||o free;[ $b -ge 5 ]&&o "#,
            #"unproven " pid=$Q reason=connections:$2";sleep 0.2 2>/dev/null|"#,
            #"|sleep 1;continue;};b=0;C=$1 X=$2 R=$3 E=$4 B=$5;[ -n "$M" "#,
            #"]&&{ j=$(awk "/^rchar:/{print \$2}" $P/$M/io 2>/dev/null);read "#,
            #"u x </proc/uptime;u=${u%.*}${u#*.};[ $n = 0 ]&&J=$j t=$u;[ "#,
            #"-n "$j" ]||M=;};D=" pid=$Q client=$C txq=$X retrans=$E silent=$B$Z${M:+ "#,
            #"beat=$(((u-t)/100))}";[ "$X" -gt 0 ]&&[ "$R" = 1 ]&&[ "$E" "#,
            #"-ge 3 ]&&break;[ -n "$M" ]&&{ [ "$j" = "$J" ]||o live "${D% "#,
            #"beat=*} beat=0";[ $((u-t)) -ge $O ]&&break;};[ $A$M = i ]&&o "#,
            #"held "$D";[ "$X" -gt 0 ]&&s=1;[ $A$n$X = r00 ]&&k&&z=1;[ "$M$X$E" "#,
            #"= 00 ]&&{ [ $s = 1 ]||{ [ $z = 1 ]&&[ $n -ge 10 ];};}&&o "#
                + #"live "$D";n=$((n+1));[ $n -ge 40 ]&&{ [ "$M$E" = 0 ]&&case "#
                + #"$z$s in 00) ;; *) o live "$D";; esac;o unproven "$D";};sleep 0.2 2>/dev/null||sleep 1;done"#,
        ].joined(),
        #"[ $A = i ]&&o dead "$D""#,
        #"kill "$Q" 2>/dev/null||o failed "$D reason=kill""#,
        #"n=0;while [ -n "$(l)" ];do n=$((n+1));"# + #"[ $n = 20 ]&&kill -9 "$Q" 2>/dev/null;"#
            + #"[ $n -ge 40 ]&&o failed "$D reason=still-held";sleep 0.1 2>/dev/null||sleep 1;done"#,
        #"o freed "$D""#,
    ]
}
