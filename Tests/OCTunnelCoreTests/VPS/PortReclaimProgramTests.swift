import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The home key's forced command run by dash and bash against /proc trees written here in the
/// kernel's own formats (tcp and tcp6 tables of a busy VPS, fd links, status and environ files),
/// with the tree's path fixed when the program is rendered, as `procRoot` is for tests only.
/// Processes here have pids above Linux's PID_MAX_LIMIT (4194304), so no `kill` can reach a real one.
@Suite("the port-reclaim program on recorded /proc trees", .ownThreads)
struct PortReclaimProgramTests {
    /// dash (Debian's sh) and bash with this machine's tools (mawk, GNU ls and grep), and busybox's
    /// sh with only busybox's applets on PATH (as on Alpine); one missing is reported by the test
    /// that needs it (`requireTool`), never left out of the list.
    static let shells: [String] = ["/bin/dash", "/bin/bash", RecordedProc.busybox]
    static let listen = HostPort(host: "127.0.0.1", port: 18080)

    @Test(
        "a busy VPS (4,000 sockets, 120 processes with 1,200 sockets among them): the sshd session holding 127.0.0.1:18080 is found by its fd, with its dead client connection",
        arguments: shells)
    func deadHolderOnBusyVPS(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        proc.tcp.append(RecordedProc.line(local: "0100007F:46A0", remote: "00000000:0000", state: "0A", inode: 70001))
        // The client connection: 92 bytes unacknowledged, resent 5 times, retransmit timer on.
        proc.tcp.append(
            RecordedProc.line(
                local: "0200000A:0016", remote: "077100CB:C832", state: "01",
                tx: 92, timer: 1, retransmits: 5, inode: 70002, rto: 640, when: 140))
        // A forwarded connection the session accepted on the held port (not its client).
        proc.tcp.append(
            RecordedProc.line(
                local: "0100007F:46A0", remote: "0100007F:D431", state: "01", tx: 10, timer: 1, retransmits: 7,
                inode: 70003))
        try proc.process(4_194_500, name: "sshd", ppid: 4_194_499, sockets: [70002, 70001, 70003])
        try proc.write()
        let output = try proc.run(shell: shell, verb: "octunnel-inspect", listen: Self.listen)
        #expect(
            output
                == "octunnel-reclaim v=1 result=dead port=127.0.0.1:18080 pid=4194500 client=203.0.113.7:51250 txq=92 retrans=5 silent=11\n"
        )
        let report = try #require(PortReclaimReport.parse(output))
        #expect(report.result == .dead && report.pid == 4_194_500 && report.client == "203.0.113.7:51250")
        #expect(report.unacknowledged == 92 && report.retransmissions == 5 && report.silentAtLeast == 11)
        #expect(
            report.summary
                == "held by a dead home session from 203.0.113.7:51250 (92 bytes unacknowledged, resent 5 times, silent at least 11 s)"
        )
        // Reclaim goes as far as ending it (that pid cannot exist, so the kill is reported failed).
        let reclaim = try proc.run(shell: shell, verb: "octunnel-reclaim", listen: Self.listen)
        #expect(
            reclaim
                == "octunnel-reclaim v=1 result=failed port=127.0.0.1:18080 pid=4194500 client=203.0.113.7:51250 txq=92 retrans=5 silent=11 reason=kill\n"
        )
    }

    @Test(
        "a holder whose client acknowledges everything, or is resending for the first times only, is not dead",
        arguments: shells)
    func notProvenDead(shell: String) throws {
        for (tx, timer, retransmits) in [(0, 0, 0), (0, 2, 0), (92, 1, 2), (92, 4, 9)] {
            let proc = try RecordedProc(busy: false)
            proc.tcp.append(
                RecordedProc.line(local: "0100007F:46A0", remote: "00000000:0000", state: "0A", inode: 70001))
            proc.tcp.append(
                RecordedProc.line(
                    local: "0200000A:0016", remote: "077100CB:C832", state: "01", tx: tx, timer: timer,
                    retransmits: retransmits, inode: 70002))
            try proc.process(4_194_500, name: "sshd", ppid: 4_194_499, sockets: [70001, 70002])
            try proc.write()
            let output = try proc.run(shell: shell, verb: "octunnel-inspect", listen: Self.listen)
            #expect(
                output
                    == "octunnel-reclaim v=1 result=held port=127.0.0.1:18080 pid=4194500 client=203.0.113.7:51250 txq=\(tx) retrans=\(retransmits) silent=0\n",
                "tx \(tx) timer \(timer) retransmits \(retransmits)")
        }
    }

    @Test(
        "tcp6: a listen on ::1 held by sshd-session (OpenSSH 9.8+) whose client is IPv6, and one whose client is IPv4-mapped",
        arguments: shells)
    func ipv6(shell: String) throws {
        let listen = HostPort(host: "::1", port: 18081)
        for (remote, client) in [
            ("B80D0120000000000000000007000000:C832", "[2001:db8:0:0:0:0:0:7]:51250"),
            ("0000000000000000FFFF0000097100CB:9C40", "203.0.113.9:40000"),
        ] {
            let proc = try RecordedProc(busy: true)
            proc.tcp6.append(
                RecordedProc.line(
                    local: "00000000000000000000000001000000:46A1", remote: String(repeating: "0", count: 32) + ":0000",
                    state: "0A", inode: 80001))
            proc.tcp6.append(
                RecordedProc.line(
                    local: "00000000000000000000000000000000:0016", remote: remote, state: "01",
                    tx: 300, timer: 1, retransmits: 3, inode: 80002, rto: 160, when: 60))
            try proc.process(4_194_600, name: "sshd-session", ppid: 4_194_599, sockets: [80001, 80002])
            try proc.write()
            let output = try proc.run(shell: shell, verb: "octunnel-inspect", listen: listen)
            #expect(
                output
                    == "octunnel-reclaim v=1 result=dead port=[::1]:18081 pid=4194600 client=\(client) txq=300 retrans=3 silent=2\n"
            )
        }
    }

    @Test(
        "a holder that is not an sshd session is named and never ended, whatever its connections look like",
        arguments: shells)
    func otherProgram(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        proc.heldWithClient(retransmits: 9)
        try proc.process(4_194_500, name: "python3", ppid: 1, sockets: [70001, 70002])
        try proc.write()
        let uid = getuid()
        for verb in ["octunnel-inspect", "octunnel-reclaim"] {
            let output = try proc.run(shell: shell, verb: verb, listen: Self.listen)
            #expect(
                output == "octunnel-reclaim v=1 result=other port=127.0.0.1:18080 pid=4194500 name=python3 uid=\(uid)\n"
            )
        }
        // An sshd session of another user is not this user's to end.
        let other = try RecordedProc(busy: false)
        other.tcp.append(
            RecordedProc.line(local: "0100007F:46A0", remote: "00000000:0000", state: "0A", uid: 1234, inode: 70001))
        try other.process(4_194_500, name: "sshd", ppid: 1, uid: 1234, sockets: [70001])
        try other.write()
        #expect(
            try other.run(shell: shell, verb: "octunnel-reclaim", listen: Self.listen)
                == "octunnel-reclaim v=1 result=other port=127.0.0.1:18080 pid=4194500 name=sshd uid=1234\n")
    }

    @Test(
        "nothing listens there (an established connection on the port, a listen on another address or port): free; a program on all addresses of that port is named",
        arguments: shells)
    func free(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        proc.tcp.append(RecordedProc.line(local: "0100007F:46A0", remote: "0100007F:D431", state: "06", inode: 0))
        proc.tcp.append(RecordedProc.line(local: "0200000A:46A0", remote: "00000000:0000", state: "0A", inode: 70011))
        proc.tcp.append(RecordedProc.line(local: "0100007F:46A1", remote: "00000000:0000", state: "0A", inode: 70012))
        try proc.write()
        #expect(
            try proc.run(shell: shell, verb: "octunnel-reclaim", listen: Self.listen)
                == "octunnel-reclaim v=1 result=free port=127.0.0.1:18080\n")
        // [::]:18080 (dual stack) keeps sshd from binding 127.0.0.1:18080 as well.
        proc.tcp6.append(
            RecordedProc.line(
                local: String(repeating: "0", count: 32) + ":46A0", remote: String(repeating: "0", count: 32) + ":0000",
                state: "0A", inode: 70013))
        try proc.process(4_194_700, name: "nginx", ppid: 1, sockets: [70013])
        try proc.write()
        #expect(
            try proc.run(shell: shell, verb: "octunnel-reclaim", listen: Self.listen)
                == "octunnel-reclaim v=1 result=other port=127.0.0.1:18080 pid=4194700 name=nginx uid=\(getuid())\n")
    }

    @Test(
        "the holder's fds unreadable (a non-root VPS user): the one session marked by octunnel-mark is the holder, its client from SSH_CONNECTION",
        arguments: shells)
    func markedSession(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        proc.heldWithClient(retransmits: 4)
        // Another client on another sshd port with the same client port: not the marked one.
        proc.tcp.append(RecordedProc.line(local: "0200000A:0017", remote: "087100CB:C832", state: "01", inode: 70004))
        try proc.session(
            4_194_500,
            environ: [
                "SSH_ORIGINAL_COMMAND=octunnel-mark", "OCTUNNEL_LISTEN=127.0.0.1:18080;",
                "SSH_CONNECTION=203.0.113.7 51250 10.0.0.2 22",
            ])
        // A marked session of another port is not counted.
        try proc.session(
            4_194_502, environ: ["OCTUNNEL_LISTEN=127.0.0.1:18081;", "SSH_CONNECTION=203.0.113.8 51250 10.0.0.2 22"])
        try proc.write()
        #expect(
            try proc.run(shell: shell, verb: "octunnel-inspect", listen: Self.listen)
                == "octunnel-reclaim v=1 result=dead port=127.0.0.1:18080 pid=4194500 client=203.0.113.7:51250 txq=92 retrans=4 silent=0 via=mark\n"
        )
        // Two marked sessions: which one listens is unknown, nothing is ended.
        try proc.session(
            4_194_504, environ: ["OCTUNNEL_LISTEN=127.0.0.1:18080;", "SSH_CONNECTION=203.0.113.8 40000 10.0.0.2 22"])
        try proc.write()
        #expect(
            try proc.run(shell: shell, verb: "octunnel-reclaim", listen: Self.listen)
                == "octunnel-reclaim v=1 result=unseen port=127.0.0.1:18080 uid=\(getuid()) holders=0 marks=2\n")
    }

    @Test(
        "environments are read as NUL-separated variables: a client's LC_* value with a newline forges neither SSH_CONNECTION nor a mark",
        arguments: shells)
    func forgedVariablesInValues(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        proc.heldWithClient(retransmits: 4)
        // `ssh -o 'SetEnv=LC_X=foo<newline>SSH_CONNECTION=6.6.6.6 …'`: sshd puts the accepted
        // LC_X before its own SSH_CONNECTION.
        try proc.session(
            4_194_500,
            environ: [
                "LC_X=foo\nSSH_CONNECTION=6.6.6.6 1 10.0.0.2 22", "SSH_ORIGINAL_COMMAND=octunnel-mark",
                "OCTUNNEL_LISTEN=127.0.0.1:18080;", "SSH_CONNECTION=203.0.113.7 51250 10.0.0.2 22",
            ])
        // Another session whose only "mark" is inside a value: not a mark.
        try proc.session(
            4_194_502,
            environ: [
                "LC_Y=x\nOCTUNNEL_LISTEN=127.0.0.1:18080;", "LC_Z=OCTUNNEL_LISTEN=127.0.0.1:18080;",
                "SSH_CONNECTION=203.0.113.8 40000 10.0.0.2 22",
            ])
        try proc.write()
        #expect(
            try proc.run(shell: shell, verb: "octunnel-inspect", listen: Self.listen)
                == "octunnel-reclaim v=1 result=dead port=127.0.0.1:18080 pid=4194500 client=203.0.113.7:51250 txq=92 retrans=4 silent=0 via=mark\n"
        )
    }

    @Test(
        "--remote-host ::1: the marked session listening on [::1]:18080 is found (the brackets are no grep character class)",
        arguments: shells)
    func markedSessionOnIPv6Loopback(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        proc.tcp6.append(
            RecordedProc.line(
                local: "00000000000000000000000001000000:46A0", remote: String(repeating: "0", count: 32) + ":0000",
                state: "0A", inode: 70001))
        proc.tcp.append(
            RecordedProc.line(
                local: "0200000A:0016", remote: "077100CB:C832", state: "01", tx: 92, timer: 1, retransmits: 4,
                inode: 70002))
        try proc.session(
            4_194_500,
            environ: [
                "SSH_ORIGINAL_COMMAND=octunnel-mark", "OCTUNNEL_LISTEN=[::1]:18080;",
                "SSH_CONNECTION=203.0.113.7 51250 10.0.0.2 22",
            ])
        // A mark of 1:18080 (what the character class [::1] would also have matched as "1").
        try proc.session(
            4_194_502, environ: ["OCTUNNEL_LISTEN=1:18080;", "SSH_CONNECTION=203.0.113.8 40000 10.0.0.2 22"])
        try proc.write()
        #expect(
            try proc.run(shell: shell, verb: "octunnel-inspect", listen: HostPort(host: "::1", port: 18080))
                == "octunnel-reclaim v=1 result=dead port=[::1]:18080 pid=4194500 client=203.0.113.7:51250 txq=92 retrans=4 silent=0 via=mark\n"
        )
    }

    @Test(
        "a line for several listens: the verb alone is the first's, VERB ADDRESS:PORT that listen's; any other address is refused",
        arguments: shells)
    func severalListens(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        let listens = [
            HostPort(host: "127.0.0.1", port: 18080), HostPort(host: "::1", port: 18081),
            HostPort(host: "127.0.0.1", port: 18082),
        ]
        // 18080 is free; [::1]:18081 is held by a dead session; 18082 by nginx.
        proc.tcp6.append(
            RecordedProc.line(
                local: "00000000000000000000000001000000:46A1", remote: String(repeating: "0", count: 32) + ":0000",
                state: "0A", inode: 70001))
        proc.tcp.append(
            RecordedProc.line(
                local: "0200000A:0016", remote: "077100CB:C832", state: "01", tx: 92, timer: 1, retransmits: 5,
                inode: 70002))
        try proc.process(4_194_500, name: "sshd", ppid: 4_194_499, sockets: [70002, 70001])
        proc.tcp.append(RecordedProc.line(local: "0100007F:46A2", remote: "00000000:0000", state: "0A", inode: 70011))
        try proc.process(4_194_700, name: "nginx", ppid: 1, sockets: [70011])
        try proc.write()
        #expect(
            try proc.run(shell: shell, verb: "octunnel-inspect", listens: listens).stdout
                == "octunnel-reclaim v=1 result=free port=127.0.0.1:18080\n")
        #expect(
            try proc.run(shell: shell, verb: "octunnel-inspect [::1]:18081", listens: listens).stdout
                == "octunnel-reclaim v=1 result=dead port=[::1]:18081 pid=4194500 client=203.0.113.7:51250 txq=92 retrans=5 silent=0\n"
        )
        #expect(
            try proc.run(shell: shell, verb: "octunnel-inspect 127.0.0.1:18082", listens: listens).stdout
                == "octunnel-reclaim v=1 result=other port=127.0.0.1:18082 pid=4194700 name=nginx uid=\(getuid())\n")
        for verb in [
            "octunnel-inspect 127.0.0.1:22", "octunnel-inspect [::1]:1808?", "octunnel-inspect *",
            "octunnel-reclaim  [::1]:18081",
            "octunnel-inspect 127.0.0.1:18080 x", "octunnel-inspect $(id)",
        ] {
            let refused = try proc.run(shell: shell, verb: verb, listens: listens)
            #expect(
                refused.stdout == "octunnel-reclaim v=1 result=refused port=127.0.0.1:18080 reason=listen\n"
                    && refused.status == 1, "\(verb): \(refused)")
        }
        #expect(
            PortReclaimProgram.command("octunnel-beat", listen: listens[1], index: 1) == "octunnel-beat [::1]:18081")
        #expect(PortReclaimProgram.command("octunnel-beat", listen: listens[0], index: 0) == "octunnel-beat")
    }

    @Test(
        "a dead session holding two listens while clients wait on both (the phones behind the laptop's two forwards): its client connection is still the one, whichever listen is asked for",
        arguments: shells)
    func deadHolderOfTwoListensWithWaitingClients(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        let listens = [HostPort(host: "127.0.0.1", port: 18080), HostPort(host: "127.0.0.1", port: 18081)]
        proc.tcp.append(RecordedProc.line(local: "0100007F:46A0", remote: "00000000:0000", state: "0A", inode: 70001))
        proc.tcp.append(RecordedProc.line(local: "0100007F:46A1", remote: "00000000:0000", state: "0A", inode: 70003))
        proc.tcp.append(
            RecordedProc.line(
                local: "0200000A:0016", remote: "077100CB:C832", state: "01", tx: 92, timer: 1, retransmits: 5,
                inode: 70002))
        // Connections sshd accepted on each listen, waiting for channels the dead home never opens.
        var sockets = [70001, 70003, 70002]
        for (index, port) in ["46A0", "46A1", "46A0", "46A1"].enumerated() {
            proc.tcp.append(
                RecordedProc.line(
                    local: "0100007F:\(port)", remote: "0100007F:\(String(0xA000 + index, radix: 16, uppercase: true))",
                    state: "01", inode: 70010 + index))
            sockets.append(70010 + index)
        }
        try proc.process(4_194_500, name: "sshd", ppid: 4_194_499, sockets: sockets)
        try proc.write()
        for verb in ["octunnel-inspect", "octunnel-inspect 127.0.0.1:18081"] {
            let port = verb.hasSuffix("18081") ? 18081 : 18080
            #expect(
                try proc.run(shell: shell, verb: verb, listens: listens).stdout
                    == "octunnel-reclaim v=1 result=dead port=127.0.0.1:\(port) pid=4194500 client=203.0.113.7:51250 txq=92 retrans=5 silent=0\n",
                "\(verb)")
        }
    }

    /// A home behind a relay (sslh): sshd's client is the relay on loopback, which acknowledges
    /// everything, and the session runs `octunnel-beat`, whose `cat` is the holder's child.
    static func relayedHolder(
        heartbeat: Bool = true, markParent: Int = 4_194_500, fds: Bool = true,
        tx: Int = 0, retransmits: Int = 0
    ) throws -> RecordedProc {
        let proc = try RecordedProc(busy: true)
        proc.tcp.append(RecordedProc.line(local: "0100007F:46A0", remote: "00000000:0000", state: "0A", inode: 70001))
        proc.tcp.append(
            RecordedProc.line(
                local: "0100007F:0016", remote: "0100007F:A0E0", state: "01", tx: tx, timer: tx > 0 ? 1 : 0,
                retransmits: retransmits, inode: 70002))
        try proc.process(4_194_500, name: "sshd-session", ppid: 4_194_499, sockets: fds ? [70001, 70002] : nil)
        try proc.process(
            4_194_501, name: "cat", ppid: markParent, sockets: [],
            environ: [
                "SSH_ORIGINAL_COMMAND=octunnel-\(heartbeat ? "beat" : "mark")",
                "OCTUNNEL_LISTEN=127.0.0.1:18080;\(heartbeat ? "beat" : "")",
                "SSH_CONNECTION=127.0.0.1 41184 127.0.0.1 22",
            ])
        try proc.write()
        return proc
    }

    @Test(
        "a holder behind a relay whose heartbeat stays away for the whole window is dead (its TCP peer, the relay, acknowledges everything); reclaim goes on to end it",
        arguments: shells)
    func heartbeatStopped(shell: String) throws {
        let proc = try Self.relayedHolder()
        try proc.io(4_194_501, rchar: 406_027)
        let prefix =
            "octunnel-reclaim v=1 result=%@ port=127.0.0.1:18080 pid=4194500 client=127.0.0.1:41184 txq=0 retrans=0 silent=0 beat=1"
        let inspect = try proc.run(shell: shell, verb: "octunnel-inspect", listen: Self.listen, heartbeatSilence: 1)
        // Watched for 1 s of the clock: the round that sees it over may end a second later on a loaded machine.
        #expect(Self.beatRounded(inspect) == String(format: prefix, "dead") + "\n")
        let report = try #require(PortReclaimReport.parse(inspect))
        #expect(report.heartbeatAge.map { (1...2).contains($0) } == true)
        #expect(
            report.summary
                == "held by a dead home session from 127.0.0.1:41184 (no heartbeat for \(report.heartbeatAge ?? 0) s)")
        let reclaim = try proc.run(shell: shell, verb: "octunnel-reclaim", listen: Self.listen, heartbeatSilence: 1)
        #expect(Self.beatRounded(reclaim) == String(format: prefix, "failed") + " reason=kill\n")
        // Where the holder's fds are unreadable (a non-root VPS user), the beat mark finds it too.
        let unreadable = try Self.relayedHolder(fds: false)
        try unreadable.io(4_194_501, rchar: 406_027)
        #expect(
            Self.beatRounded(
                try unreadable.run(shell: shell, verb: "octunnel-inspect", listen: Self.listen, heartbeatSilence: 1))
                == "octunnel-reclaim v=1 result=dead port=127.0.0.1:18080 pid=4194500 client=127.0.0.1:41184 txq=0 retrans=0 silent=0 via=mark beat=1\n"
        )
    }

    /// `beat=2` read as `beat=1`: a 1 s watch that a loaded machine's last round overran.
    static func beatRounded(_ output: String) -> String {
        output.replacingOccurrences(of: " beat=2", with: " beat=1")
    }

    @Test(
        "a holder whose heartbeat comes late, but within the window, is live and kept; one whose heartbeat comes at once too",
        arguments: shells)
    func heartbeatLate(shell: String) throws {
        // Rounds take 0.2 s or more each: 4 unchanged rounds are about 1 s of a 3 s window.
        for (same, silence) in [(0, 1), (4, 3), (3, 6)] {
            let proc = try Self.relayedHolder()
            let io = try FIFOFeeder(proc.ioFIFO(4_194_501))
            let program = try proc.start(
                shell: shell, verb: "octunnel-reclaim", listen: Self.listen, heartbeatSilence: silence)
            defer { program.signal(SIGKILL); _ = program.waitForExit(timeout: 5) }
            // The program's rounds read the counter once each: `same` rounds unchanged, then 2 bytes more.
            for rchar in Array(repeating: 406_027, count: same + 1) + [406_029] {
                #expect(io.feed("rchar: \(rchar)\nwchar: 0\nsyscr: 749\n", while: program), "round with rchar \(rchar)")
            }
            #expect(program.waitForExit(timeout: 20) == 0)
            let output = program.stdout.joined(separator: "\n")
            #expect(
                output
                    == "octunnel-reclaim v=1 result=live port=127.0.0.1:18080 pid=4194500 client=127.0.0.1:41184 txq=0 retrans=0 silent=0 beat=0",
                "\(same) rounds without a heartbeat, window \(silence) s: \(program.stderrText)")
            #expect(
                PortReclaimReport.parse(output)?.summary
                    == "held by a live home session from 127.0.0.1:41184: its heartbeat came just now, so it keeps the port"
            )
        }
    }

    @Test(
        "a holder without a heartbeat (an old home up's mark, ssh -R), or whose beat mark is another session's, keeps the TCP rule: the relay's acknowledgements are taken as live",
        arguments: shells)
    func noHeartbeat(shell: String) throws {
        for proc in [try Self.relayedHolder(heartbeat: false), try Self.relayedHolder(markParent: 4_194_499)] {
            try proc.io(4_194_501, rchar: 406_027)
            #expect(
                try proc.run(shell: shell, verb: "octunnel-inspect", listen: Self.listen, heartbeatSilence: 1)
                    == "octunnel-reclaim v=1 result=held port=127.0.0.1:18080 pid=4194500 client=127.0.0.1:41184 txq=0 retrans=0 silent=0\n"
            )
        }
        // With a heartbeat, resends still prove a directly connected client dead at once.
        let direct = try Self.relayedHolder(tx: 92, retransmits: 3)
        try direct.io(4_194_501, rchar: 406_027)
        let output = try direct.run(shell: shell, verb: "octunnel-inspect", listen: Self.listen, heartbeatSilence: 6)
        #expect(
            output
                == "octunnel-reclaim v=1 result=dead port=127.0.0.1:18080 pid=4194500 client=127.0.0.1:41184 txq=92 retrans=3 silent=0 beat=0\n"
        )
        #expect(
            PortReclaimReport.parse(output)?.summary
                == "held by a dead home session from 127.0.0.1:41184 (92 bytes unacknowledged, resent 3 times)")
    }

    @Test(
        "the holder's client connection missing from one read of /proc/net/tcp: the holder ended in between (free), the table changed under the read (read again), or it stays missing (unproven after 2 s)",
        arguments: shells)
    func connectionMissing(shell: String) throws {
        let listener = RecordedProc.line(local: "0100007F:46A0", remote: "00000000:0000", state: "0A", inode: 70001)
        let client = RecordedProc.line(
            local: "0100007F:0016", remote: "0100007F:A0E0", state: "01", tx: 92, timer: 1, retransmits: 3, inode: 70002
        )
        // Each read of net/tcp (a FIFO) takes the next table: the program's first read finds the
        // listener and its holder; the next ones are fed in turn.
        for (tables, expected) in [
            ([[listener], [], []], "octunnel-reclaim v=1 result=free port=127.0.0.1:18080"),
            (
                [[listener, client], [listener], [listener], [listener, client]],
                "octunnel-reclaim v=1 result=dead port=127.0.0.1:18080 pid=4194500 client=127.0.0.1:41184 txq=92 retrans=3 silent=0"
            ),
        ] {
            let proc = try Self.relayedHolder(heartbeat: false)
            let tcp = try FIFOFeeder(proc.tcpFIFO())
            let program = try proc.start(
                shell: shell, verb: "octunnel-inspect", listen: Self.listen, heartbeatSilence: 6)
            defer { program.signal(SIGKILL); _ = program.waitForExit(timeout: 5) }
            for (index, table) in tables.enumerated() {
                #expect(
                    tcp.feed(RecordedProc.table(table), while: program),
                    "read \(index + 1) of net/tcp: \(program.stderrText)")
            }
            #expect(program.waitForExit(timeout: 20) == 0)
            #expect(program.stdout.joined(separator: "\n") == expected, "\(program.stderrText)")
        }
        let missing = try RecordedProc(busy: false)
        missing.tcp = [listener]
        try missing.process(4_194_500, name: "sshd-session", ppid: 4_194_499, sockets: [70001, 70002])
        try missing.write()
        let output = try missing.run(shell: shell, verb: "octunnel-reclaim", listen: Self.listen)
        #expect(
            output == "octunnel-reclaim v=1 result=unproven port=127.0.0.1:18080 pid=4194500 reason=connections:0\n")
        #expect(
            PortReclaimReport.parse(output)?.summary
                == "held by an sshd session (pid 4194500) whose client connection could not be singled out (0 found for 2 s, 1 needed)"
        )
    }

    @Test("a listener of another user that no readable process holds: unseen, with its owner", arguments: shells)
    func unseen(shell: String) throws {
        let proc = try RecordedProc(busy: true)
        proc.tcp.append(
            RecordedProc.line(local: "0100007F:46A0", remote: "00000000:0000", state: "0A", uid: 4321, inode: 70001))
        try proc.write()
        #expect(
            try proc.run(shell: shell, verb: "octunnel-reclaim", listen: Self.listen)
                == "octunnel-reclaim v=1 result=unseen port=127.0.0.1:18080 uid=4321 holders=0\n")
    }

    @Test(
        "anything but the verbs, alone or naming the line's listen, is refused with exit 1 and nothing else runs",
        arguments: shells)
    func verbs(shell: String) throws {
        let proc = try RecordedProc(busy: false)
        try proc.write()
        let canary = proc.root.file("canary")
        for verb in [
            nil, "", "octunnel-reclaim; touch \(canary)", "octunnel-inspect x", "$(touch \(canary))", "/bin/sh",
            "OCTUNNEL-RECLAIM",
        ] {
            let result = try proc.result(shell: shell, verb: verb, listen: Self.listen)
            #expect(result.status == 1, "\(verb ?? "(none)")")
            // More than one word: the words after the first name no listen of the line.
            let reason = verb?.contains(" ") == true ? "listen" : "verb"
            #expect(
                result.stdout == "octunnel-reclaim v=1 result=refused port=127.0.0.1:18080 reason=\(reason)\n",
                "\(verb ?? "(none)")")
        }
        #expect(!fileExists(canary))
    }

    @Test(
        "the authorized_keys line's command, dequoted as sshd does and run by a login shell, runs the program on the real /proc"
    )
    func authorizedKeysCommand() throws {
        let port = freePort()
        let key = SSHPublicKey(ed25519: Array(repeating: 7, count: 32), comment: "home")
        let line = listenAuthorizedKeysLine(key, remotePort: port)
        // With the rotation verbs before it (issue 47) the line is about 8.8 KB: an sshd that reads
        // authorized_keys into a fixed buffer takes lines up to SSH_MAX_PUBKEY_BYTES (16384), newer ones
        // (getline) any length; HomeUpTests has OpenSSH 9.2's sshd accept it.
        #expect(!line.contains("\n") && line.utf8.count < OctunnelKeyLine.longestLine)
        // sshd's opt_dequote: `\"` is a quote, anything else is itself; the value ends at the first bare quote.
        let start = try #require(line.range(of: "command=\"")).upperBound
        var command = ""
        var index = start
        while line[index] != "\"" {
            if line[index] == "\\", line[line.index(after: index)] == "\"" { index = line.index(after: index) }
            command.append(line[index])
            index = line.index(after: index)
        }
        // The line's parameters and the rotation verbs first (issue 47), then the program as it always was.
        #expect(
            command.hasPrefix(
                "exec /bin/sh -c 'K=\(OctunnelKeyLine.tag(for: key)) P= A=\(OctunnelKeyLine.today()) F=.ssh/authorized_keys;"
            ),
            "\(command.prefix(60))")
        #expect(
            command.hasSuffix(
                ";" + PortReclaimProgram.program(listens: [HostPort(host: "127.0.0.1", port: port)]) + "'")
                && command.contains(";P=/proc O=600 T= g=\" \(String(format: "%04X", port)) \";")
                && command.contains(" W=\"127.0.0.1:\(port)\" "),
            "\(command.prefix(60))")
        for shell in Self.shells where shell != RecordedProc.busybox {
            try requireTool(shell, "the line's command is run by dash and bash")
            let result = try run(
                shell, ["-c", command],
                environment: ["SSH_ORIGINAL_COMMAND": "octunnel-inspect", "PATH": "/usr/bin:/bin"])
            #expect(
                result.stdout == "octunnel-reclaim v=1 result=free port=127.0.0.1:\(port)\n",
                "\(shell): \(result.stderr)")
        }
    }

    @Test("listen addresses in /proc/net/tcp's form: IPv4 little-endian, IPv6 word by word, localhost both")
    func hexAddresses() {
        #expect(PortReclaimProgram.hexAddresses("127.0.0.1") == ["0100007F"])
        #expect(PortReclaimProgram.hexAddresses("10.0.0.2") == ["0200000A"])
        #expect(PortReclaimProgram.hexAddresses("::1") == ["00000000000000000000000001000000"])
        #expect(PortReclaimProgram.hexAddresses("2001:db8::7") == ["B80D0120000000000000000007000000"])
        #expect(PortReclaimProgram.hexAddresses("localhost") == ["0100007F", "00000000000000000000000001000000"])
        #expect(PortReclaimProgram.hexAddresses("0.0.0.0") == ["00000000"])
        #expect(
            PortReclaimProgram.program(listen: HostPort(host: "127.0.0.1", port: 80))
                .contains(
                    #"""|"127.0.0.1:80") W="127.0.0.1:80" L=" 0100007F:0050 00000000:0050 "#
                        + String(repeating: "0", count: 32) + #":0050 ";;"#))
    }

    @Test("the program's lines parse; other output (an old key line) does not")
    func reports() {
        let line =
            "octunnel-reclaim v=1 result=live port=127.0.0.1:18080 pid=812 client=203.0.113.7:51234 txq=0 retrans=0"
        let report = PortReclaimReport.parse("bash: line 1: warning\n" + line + "\n")
        #expect(report?.result == .live && report?.pid == 812 && report?.client == "203.0.113.7:51234")
        #expect(
            report?.summary
                == "held by a live home session from 203.0.113.7:51234: it answered just now, so it keeps the port")
        #expect(PortReclaimReport.parse("") == nil)
        #expect(
            PortReclaimReport.duration(14) == "14 s" && PortReclaimReport.duration(14 * 60 + 5) == "14 min"
                && PortReclaimReport.duration(7500) == "2 h 5 min")
        #expect(PortReclaimReport.parse("bash: octunnel-reclaim: command not found\n") == nil)
        #expect(PortReclaimReport.parse("octunnel-reclaim v=2 result=freed port=x") == nil)
        #expect(PortReclaimReport.parse("octunnel-reclaim v=1 result=bogus port=x") == nil)
        #expect(
            PortReclaimReport.parse("octunnel-reclaim v=1 result=freed port=127.0.0.1:18080 pid=9")?.portIsFree == true)
        // What the VPS wrote reaches the terminal without its controls.
        #expect(
            PortReclaimReport.parse("octunnel-reclaim v=1 result=other port=x pid=9 name=\u{1b}]0;owned\u{7} uid=1")?
                .name == "\\x1b]0;owned\\x07")
        #expect(
            PortReclaimReport.parse("octunnel-reclaim v=1 result=other port=127.0.0.1:18080 pid=9 name=nginx uid=33")?
                .summary
                == "taken by another program (nginx, pid 9, uid 33), not an sshd session of this user: left alone")
        // A holder with a heartbeat: its age is the evidence, unless TCP's resends proved it dead first.
        let beat =
            "octunnel-reclaim v=1 port=127.0.0.1:18080 pid=812 client=127.0.0.1:41184 txq=0 retrans=0 silent=0 beat="
        #expect(
            PortReclaimReport.parse(beat.replacingOccurrences(of: "v=1", with: "v=1 result=freed") + "6")?.summary
                == "ended the dead home session from 127.0.0.1:41184 that held it (pid 812, no heartbeat for 6 s)")
        #expect(
            PortReclaimReport.parse(beat.replacingOccurrences(of: "v=1", with: "v=1 result=unproven") + "4")?.summary
                == "held by an sshd session from 127.0.0.1:41184 not yet proven dead (no heartbeat for 4 s; \(PortReclaimProgram.heartbeatSilence) s needed)"
        )
        #expect(
            PortReclaimReport.parse(
                "octunnel-reclaim v=1 result=freed port=127.0.0.1:18080 pid=812 client=203.0.113.7:51234 txq=92 retrans=3 silent=2 beat=1"
            )?.summary
                == "ended the dead home session from 203.0.113.7:51234 that held it (pid 812, 92 bytes unacknowledged, resent 3 times, silent at least 2 s)"
        )
    }
}

/// A /proc tree in a temp directory: net/tcp and net/tcp6 (with a busy VPS's worth of other
/// sockets when asked), and processes with fd links to `socket:[inode]`, status and environ.
final class RecordedProc {
    let root: TempDirectory
    var tcp: [String] = []
    var tcp6: [String] = []

    init(busy: Bool) throws {
        root = try TempDirectory("octunnel-proc")
        // Two harmless processes, so `ls` always prints each fd directory's heading.
        try process(4_194_400, name: "systemd", ppid: 0, sockets: [9])
        try process(4_194_401, name: "cron", ppid: 4_194_400, sockets: [])
        guard busy else { return }
        var random = SystemRandomNumberGenerator()
        for index in 0..<3000 {
            let local = index % 3 == 0 ? "0100007F" : "0200000A"
            tcp.append(
                Self.line(
                    local: "\(local):\(Self.hex(1024 + index % 60000, 4))",
                    remote:
                        "\(Self.hex(Int(UInt32.random(in: 1...UInt32.max, using: &random)), 8)):\(Self.hex(Int.random(in: 1...65535, using: &random), 4))",
                    state: ["01", "06", "08", "01"][index % 4], tx: index % 7 == 0 ? 1400 : 0,
                    timer: index % 7 == 0 ? 1 : 0,
                    retransmits: index % 11 == 0 ? 4 : 0, inode: 100_000 + index))
        }
        for index in 0..<1000 {
            tcp6.append(
                Self.line(
                    local: "00000000000000000000000001000000:\(Self.hex(2000 + index, 4))",
                    remote: "\(Self.hex(index, 32)):\(Self.hex(40000 + index % 20000, 4))", state: "01",
                    inode: 200_000 + index))
        }
        for pid in 0..<120 {
            try process(
                4_194_410 + pid, name: ["nginx", "sshd", "bash", "postgres"][pid % 4], ppid: 4_194_400,
                sockets: (0..<10).map { 100_000 + (pid * 10 + $0) % 4000 }.filter { $0 != 70001 })
        }
    }

    /// One line of /proc/net/tcp or tcp6, as tcp4_seq_show / tcp6_seq_show print it.
    static func line(
        local: String, remote: String, state: String, tx: Int = 0, timer: Int = 0, retransmits: Int = 0,
        uid: UInt32 = getuid(), inode: Int, rto: Int = 20, when: Int? = nil
    ) -> String {
        "   0: \(local) \(remote) \(state) \(hex(tx, 8)):00000000 \(hex(timer, 2)):\(hex(when ?? (timer == 0 ? 0 : 28), 8)) \(hex(retransmits, 8)) "
            + "\(String(repeating: " ", count: max(0, 5 - String(uid).count)))\(uid)        0 \(inode) 1 0000000000000000 \(rto) 4 30 10 -1"
    }

    /// The listen 127.0.0.1:18080 (inode 70001) and an sshd session's client connection from
    /// 203.0.113.7:51250 (inode 70002): 92 bytes unacknowledged, resent `retransmits` times.
    func heldWithClient(retransmits: Int) {
        tcp.append(Self.line(local: "0100007F:46A0", remote: "00000000:0000", state: "0A", inode: 70001))
        tcp.append(
            Self.line(
                local: "0200000A:0016", remote: "077100CB:C832", state: "01", tx: 92, timer: 1,
                retransmits: retransmits, inode: 70002))
    }

    /// `value` in upper-case hex, zero-padded to `width` digits.
    static func hex(_ value: Int, _ width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// A session of sshd (`pid`, its fds unreadable) whose command is `cat` (`pid + 1`) with
    /// `environ`: an octunnel-mark session as a non-root VPS user sees it.
    func session(_ pid: Int, environ: [String]) throws {
        try process(pid, name: "sshd", ppid: 4_194_499, sockets: nil)
        try process(pid + 1, name: "cat", ppid: pid, sockets: [], environ: environ)
    }

    /// A process: `sockets` nil leaves out its fd directory (unreadable, as sshd's session is to a non-root user).
    func process(
        _ pid: Int, name: String, ppid: Int, uid: UInt32 = getuid(), sockets: [Int]?, environ: [String] = []
    ) throws {
        let directory = root.file(String(pid))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try writeText(
            "Name:\t\(name)\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t\(pid)\nNgid:\t0\nPid:\t\(pid)\nPPid:\t\(ppid)\nTracerPid:\t0\nUid:\t\(uid)\t\(uid)\t\(uid)\t\(uid)\nGid:\t0\t0\t0\t0\n",
            to: directory + "/status")
        try writeBytes(Array((environ.map { $0 + "\0" }.joined()).utf8), to: directory + "/environ")
        guard let sockets else { return }
        let fds = directory + "/fd"
        try? FileManager.default.removeItem(atPath: fds)
        try FileManager.default.createDirectory(atPath: fds, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fds + "/0", withDestinationPath: "/dev/null")
        for (index, inode) in sockets.enumerated() {
            try FileManager.default.createSymbolicLink(
                atPath: fds + "/\(index + 3)", withDestinationPath: "socket:[\(inode)]")
        }
    }

    func write() throws {
        try FileManager.default.createDirectory(atPath: root.file("net"), withIntermediateDirectories: true)
        try writeText(Self.table(tcp), to: root.file("net/tcp"))
        try writeText(Self.table(tcp6), to: root.file("net/tcp6"))
    }

    /// net/tcp and tcp6 as the kernel prints them, with these lines.
    static func table(_ lines: [String]) -> String {
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
            + lines.map { $0 + "\n" }.joined()
    }

    /// net/tcp as a FIFO: each read of it by the program takes what the test feeds next.
    func tcpFIFO() throws -> String {
        let path = root.file("net/tcp")
        try FileManager.default.removeItem(atPath: path)
        guard mkfifo(path, 0o600) == 0 else { throw HarnessError("mkfifo \(path): errno \(errno)") }
        return path
    }

    /// `/proc/PID/io` with its read counter at `rchar`.
    func io(_ pid: Int, rchar: Int) throws {
        try writeText("rchar: \(rchar)\nwchar: 0\nsyscr: 749\nsyscw: 0\n", to: root.file("\(pid)/io"))
    }

    /// `/proc/PID/io` as a FIFO: each read of it by the program takes what the test feeds next.
    func ioFIFO(_ pid: Int) throws -> String {
        let path = root.file("\(pid)/io")
        guard mkfifo(path, 0o600) == 0 else { throw HarnessError("mkfifo \(path): errno \(errno)") }
        return path
    }

    static let busybox = "/bin/busybox"

    func result(
        shell: String, verb: String?, listen: HostPort, heartbeatSilence: Int = PortReclaimProgram.heartbeatSilence
    ) throws -> ProcessResult {
        let (path, arguments, environment) = try command(
            shell: shell, verb: verb, listen: listen, heartbeatSilence: heartbeatSilence)
        return try OCTunnelTestSupport.run(path, arguments, environment: environment)
    }

    /// The program started, not awaited.
    func start(shell: String, verb: String?, listen: HostPort, heartbeatSilence: Int) throws -> RunningProcess {
        let (path, arguments, environment) = try command(
            shell: shell, verb: verb, listen: listen, heartbeatSilence: heartbeatSilence)
        return try RunningProcess(path, arguments, environment: environment)
    }

    private func command(
        shell: String, verb: String?, listen: HostPort, heartbeatSilence: Int, also: [HostPort] = []
    ) throws -> (String, [String], [String: String]) {
        try requireTool(
            shell, "the reclaim program is tested in dash, bash and busybox's sh (apt install dash bash busybox)")
        let program = PortReclaimProgram.program(
            listens: [listen] + also, procRoot: root.path, heartbeatSilence: heartbeatSilence)
        var environment = ["PATH": "/usr/bin:/bin"]
        if let verb { environment["SSH_ORIGINAL_COMMAND"] = verb }
        guard shell == Self.busybox else { return (shell, ["-c", program], environment) }
        // Only busybox's applets: a directory of links to it (not a pid, so /proc globs skip it).
        let tools = root.file("busybox-bin")
        if !fileExists(tools) {
            try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
            for tool in ["sh", "awk", "ls", "grep", "tr", "sleep", "kill", "id", "printf", "cat", "nc"] {
                try FileManager.default.createSymbolicLink(
                    atPath: tools + "/" + tool, withDestinationPath: Self.busybox)
            }
        }
        environment["PATH"] = tools
        return (Self.busybox, ["sh", "-c", program], environment)
    }

    /// The program's stdout for `verb`.
    func run(
        shell: String, verb: String, listen: HostPort, heartbeatSilence: Int = PortReclaimProgram.heartbeatSilence
    ) throws -> String {
        try result(shell: shell, verb: verb, listen: listen, heartbeatSilence: heartbeatSilence).stdout
    }

    /// The stdout and status of the program of a line for `listens` (the first is the verb's default).
    func run(shell: String, verb: String, listens: [HostPort]) throws -> ProcessResult {
        let (path, arguments, environment) = try command(
            shell: shell, verb: verb, listen: listens[0],
            heartbeatSilence: PortReclaimProgram.heartbeatSilence, also: Array(listens.dropFirst()))
        return try OCTunnelTestSupport.run(path, arguments, environment: environment)
    }
}

/// Feeds a FIFO one text per read: each text goes to the next reader that opens it. That the
/// reader which took a text has let go is told by inotify (its `IN_CLOSE_NOWRITE`), never by
/// opening the FIFO again: such a probe, landing while the program's next read already waits in
/// open(), completes that open and, closing, hands it an empty table (CI with busy loops: the
/// "read again" case asked for one read more than the test feeds and waited; issue noted at
/// 9f7dcfe). A text written before the previous reader let go would join its read instead.
final class FIFOFeeder {
    let path: String
    private let events: Int32

    /// Watches `path` (made by the test, before the program starts) for readers closing it.
    init(_ path: String) throws {
        self.path = path
        events = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard events >= 0 else { throw HarnessError("inotify_init1: errno \(errno)") }
        guard inotify_add_watch(events, path, UInt32(IN_CLOSE_NOWRITE)) >= 0 else {
            close(events)
            throw HarnessError("inotify_add_watch \(path): errno \(errno)")
        }
    }

    deinit { close(events) }

    /// Writes `text` once a reader has the FIFO open (polled every 10 ms, for up to 20 s and while
    /// `reader` runs), then waits for that reader to close it; false when no reader came.
    func feed(_ text: String, while reader: RunningProcess) -> Bool {
        var fd: Int32 = -1
        _ = waitUntil(timeout: 20) {
            fd = open(path, O_WRONLY | O_NONBLOCK)
            return fd >= 0 || !reader.isRunning
        }
        guard fd >= 0 else { return false }
        let bytes = Array(text.utf8)
        let written = write(fd, bytes, bytes.count) == bytes.count
        close(fd)
        // Only readers close the FIFO without writing: one event is this reader letting go.
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = waitUntil(timeout: 20) { read(events, &buffer, buffer.count) > 0 || !reader.isRunning }
        return written
    }
}
