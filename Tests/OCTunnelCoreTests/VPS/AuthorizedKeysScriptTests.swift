import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// install, list and revoke as the user's own login runs them (`/bin/sh -s`, the script on
/// stdin), under dash, bash and busybox sh, against homes and sshd configurations in temp
/// directories.
@Suite("installing, listing and revoking octunnel's authorized_keys lines", .ownThreads)
struct AuthorizedKeysScriptTests {
    static let shells = KeysHome.shells
    static let forward = HostPort(host: "127.0.0.1", port: 18080)

    /// An sshd configuration as Debian ships it: an Include of sshd_config.d/*.conf first.
    static func sshdConfig(_ vps: KeysHome, _ included: String? = nil, main: String = "") throws -> String {
        let directory = vps.root.file("etc-ssh")
        try FileManager.default.createDirectory(atPath: directory + "/sshd_config.d", withIntermediateDirectories: true)
        try writeText(
            "Include sshd_config.d/*.conf\n\(main)Port 22\nMatch User other\n    AuthorizedKeysFile /nowhere\n",
            to: directory + "/sshd_config", mode: 0o644)
        if let included { try writeText(included, to: directory + "/sshd_config.d/50-site.conf", mode: 0o644) }
        return directory + "/sshd_config"
    }

    @Test(
        "install into a home without ~/.ssh: ~/.ssh 0700 and the file 0600 with the line; twice: present, one line",
        arguments: shells)
    func installFresh(shell: String) throws {
        let vps = try KeysHome(ssh: false)
        let line = OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: KeysHome.ed25519("laptop")).line
        let script = AuthorizedKeysScript.install(
            line: line, file: ".ssh/authorized_keys", sshdConfig: try Self.sshdConfig(vps))
        let result = try vps.run(script: script, shell: shell)
        #expect(result.stdout == "octunnel-keys v=1 result=added\n" && result.status == 0, "\(result)")
        #expect(try mode(of: vps.home + "/.ssh") & 0o777 == 0o700 && (try mode(of: vps.file)) & 0o777 == 0o600)
        #expect(try vps.contents() == line + "\n")
        let again = try vps.run(script: script, shell: shell)
        #expect(again.stdout == "octunnel-keys v=1 result=present\n" && again.status == 0, "\(again)")
        #expect(try vps.contents() == line + "\n")
        #expect(AuthorizedKeysReport.parse(again.stdout)?.result == .present)
    }

    @Test(
        "install beside other lines (CRLF, no newline at the end): appended after a newline, every other byte kept; a ~/.ssh of mode 0777 and a group-writable file are fixed and said so",
        arguments: shells)
    func installBeside(shell: String) throws {
        let vps = try KeysHome()
        let before =
            "ssh-rsa AAAAB3NzaC1yc2E mine\r\n\n# note\r\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBSc/yJtN5yOjf4GFjCUkIaFw+XUX3bQQK/e3QbOx9wF last"
        try vps.write(before, mode: 0o664)
        try setMode(0o777, of: vps.home + "/.ssh")
        let line = OctunnelKeyLine(role: .home, ends: [Self.forward], key: KeysHome.ed25519("home")).line
        let result = try vps.run(
            script: AuthorizedKeysScript.install(
                line: line, file: ".ssh/authorized_keys", sshdConfig: try Self.sshdConfig(vps)), shell: shell)
        #expect(result.stdout == "octunnel-keys v=1 result=added modes=fixed\n" && result.status == 0, "\(result)")
        #expect(try vps.contents() == before + "\n" + line + "\n")
        #expect(try mode(of: vps.home + "/.ssh") & 0o777 == 0o755 && (try mode(of: vps.file)) & 0o777 == 0o644)
        #expect(AuthorizedKeysReport.parse(result.stdout)?.modesFixed == true)
        // The same key in a line of the user's own, with no options: present, nothing changed.
        let plain = try KeysHome()
        let key = KeysHome.ed25519("k")
        try plain.write(key.line + "\n")
        let present = try plain.run(
            script: AuthorizedKeysScript.install(
                line: OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: key).line,
                file: ".ssh/authorized_keys", sshdConfig: try Self.sshdConfig(plain)), shell: shell)
        #expect(try present.stdout == "octunnel-keys v=1 result=present\n" && plain.contents() == key.line + "\n")
    }

    @Test(
        "sshd reads keys from other files (AuthorizedKeysFile in an Include'd file, or in sshd_config itself): refused with those files, nothing written; %h and %u forms that name the file are accepted",
        arguments: shells)
    func authorizedKeysFileElsewhere(shell: String) throws {
        let line = OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: KeysHome.ed25519("laptop")).line
        for (included, main, accepted) in [
            ("AuthorizedKeysFile /etc/ssh/keys/%u .ssh/authorized_keys2\n", "", false),
            (nil, "authorizedkeysfile=/etc/ssh/keys/%u\n", false),
            ("  AuthorizedKeysFile\t%h/.ssh/authorized_keys /etc/ssh/keys/%u\n", "", true),
            ("AuthorizedKeysFile /etc/keys/%u\n", "AuthorizedKeysFile .ssh/authorized_keys\n", false),
            (nil, "", true),
        ] as [(String?, String, Bool)] {
            let vps = try KeysHome()
            try vps.write("ssh-ed25519 AAAA mine\n")
            let config = try Self.sshdConfig(vps, included, main: main)
            let result = try vps.run(
                script: AuthorizedKeysScript.install(line: line, file: ".ssh/authorized_keys", sshdConfig: config),
                shell: shell)
            if accepted {
                #expect(result.stdout == "octunnel-keys v=1 result=added\n", "\(included ?? main): \(result)")
            } else {
                #expect(
                    result.stdout.hasPrefix("octunnel-keys v=1 result=refused reason=elsewhere files=")
                        && result.status == 1, "\(included ?? main): \(result)")
                #expect(try vps.contents() == "ssh-ed25519 AAAA mine\n")
            }
        }
        let vps = try KeysHome()
        let refused = try vps.run(
            script: AuthorizedKeysScript.install(
                line: line, file: ".ssh/authorized_keys",
                sshdConfig: try Self.sshdConfig(vps, "AuthorizedKeysFile /etc/ssh/keys/%u .ssh/authorized_keys2\n")),
            shell: shell)
        let report = try #require(AuthorizedKeysReport.parse(refused.stdout))
        #expect(report.files == "/etc/ssh/keys/%u,.ssh/authorized_keys2")
        #expect(
            report.summary
                == "refused: sshd reads keys only from /etc/ssh/keys/%u, .ssh/authorized_keys2 (AuthorizedKeysFile in sshd_config); authorized_keys is as it was"
        )
        #expect(!fileExists(vps.file))
    }

    @Test("install refuses a symlinked file or ~/.ssh, and what it will not pass to a shell", arguments: shells)
    func installRefusals(shell: String) throws {
        let line = OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: KeysHome.ed25519("laptop")).line
        let vps = try KeysHome()
        try writeText("x\n", to: vps.root.file("target"))
        try FileManager.default.createSymbolicLink(atPath: vps.file, withDestinationPath: vps.root.file("target"))
        let config = try Self.sshdConfig(vps)
        #expect(
            try vps.run(
                script: AuthorizedKeysScript.install(line: line, file: ".ssh/authorized_keys", sshdConfig: config),
                shell: shell
            ).stdout
                == "octunnel-keys v=1 result=refused reason=symlink\n")
        #expect(try readText(vps.root.file("target")) == "x\n")
        for (badLine, file) in [
            (line + "\nrestrict ssh-ed25519 AAAA", ".ssh/authorized_keys"), (line, ".ssh/authorized keys"),
            (line, ".ssh/$(id)"),
            ("not a key line", ".ssh/authorized_keys"), (line, ".ssh/authorized_keys2"),
        ] {
            let result = try vps.run(
                script: AuthorizedKeysScript.install(line: badLine, file: file, sshdConfig: config), shell: shell)
            #expect(result.stdout == "octunnel-keys v=1 result=refused reason=file\n" && result.status == 1)
        }
    }

    @Test(
        "list prints octunnel's lines only, of every form, bounded; revoke removes the key's octunnel line and keeps the user's own line with the same key",
        arguments: shells)
    func listAndRevoke(shell: String) throws {
        let vps = try KeysHome()
        #expect(
            try vps.run(script: AuthorizedKeysScript.list(file: ".ssh/authorized_keys"), shell: shell).stdout
                == "octunnel-keys v=1 result=absent\n")
        let laptop = KeysHome.ed25519("laptop"), home = KeysHome.ed25519("home"), old = KeysHome.ed25519("old")
        let laptopLine = OctunnelKeyLine(
            role: .tunnel, ends: [Self.forward, HostPort(host: "::1", port: 2200)], key: laptop
        ).line
        let homeLine = OctunnelKeyLine(
            role: .home, ends: [Self.forward], key: home, predecessor: "0123456789abcdef", added: "20260102"
        ).line
        let oldLine =
            "restrict,port-forwarding,permitopen=\"127.0.0.1:18080\",permitlisten=\"127.0.0.1:1\",command=\"/bin/false\" \(old.line)"
        let before =
            "\(laptop.line) my own line\n\(laptopLine)\r\n\(homeLine)\n\(oldLine)\nrestrict,command=\"/bin/false\" \(old.line)\n"
            + String(repeating: "x", count: 20_000)
        try vps.write(before)
        let listed = try vps.run(script: AuthorizedKeysScript.list(file: ".ssh/authorized_keys"), shell: shell)
        #expect(
            listed.status == 0 && listed.stdout.hasSuffix("octunnel-keys v=1 result=listed lines=3 skipped=0\n"),
            "\(listed)")
        let lines = AuthorizedKeysScript.listedLines(in: listed.stdout)
        #expect(lines.map(\.role) == [.tunnel, .home, .tunnel])
        #expect(
            lines[0].ends == [Self.forward, HostPort(host: "::1", port: 2200)]
                && lines[0].tag == OctunnelKeyLine.tag(for: laptop))
        #expect(
            lines[1].predecessor == "0123456789abcdef" && lines[1].added == "20260102" && lines[1].key.blob == home.blob
        )
        #expect(lines[2].tag == nil && lines[2].key.blob == old.blob)
        #expect(AuthorizedKeysReport.parse(listed.stdout).map { $0.result == .listed && $0.lines == 3 } == true)
        let revoked = try vps.run(script: Self.revoke(laptop), shell: shell)
        // The user's own line with that key stays, named by its number.
        #expect(
            revoked.stdout
                == "octunnel-keys-left 1\noctunnel-keys-removed \(laptopLine)\r\noctunnel-keys v=1 result=revoked removed=1 left=1\n"
                && revoked.status == 0, "\(revoked)")
        #expect(try vps.contents() == before.replacingOccurrences(of: laptopLine + "\r\n", with: ""))
        let absent = try vps.run(script: Self.revoke(laptop), shell: shell)
        #expect(absent.stdout == "octunnel-keys-left 1\noctunnel-keys v=1 result=absent left=1\n", "\(absent)")
        #expect(try vps.contents() == before.replacingOccurrences(of: laptopLine + "\r\n", with: ""))
        // The last line, without its newline: the file ends as it did.
        let last = try KeysHome()
        try last.write("\(laptop.line) mine\n\(homeLine)")
        #expect(
            try last.run(script: Self.revoke(home), shell: shell).stdout
                == "octunnel-keys-removed \(homeLine)\noctunnel-keys v=1 result=revoked removed=1 left=0\n")
        #expect(try last.contents() == "\(laptop.line) mine")
        // The last octunnel line a CRLF one: its CR is no line of its own, and the report after it is found.
        try last.write("\(homeLine)\r\n")
        let crlf = try last.run(script: AuthorizedKeysScript.list(file: ".ssh/authorized_keys"), shell: shell)
        #expect(
            AuthorizedKeysReport.parse(crlf.stdout)?.lines == 1
                && AuthorizedKeysScript.listedLines(in: crlf.stdout).count == 1, "\(crlf)")
        #expect(
            AuthorizedKeysScript.revoke(
                tag: "0123456789abcdef", keyBlob: "AAAA\"; rm -rf ~", file: ".ssh/authorized_keys"
            ).hasPrefix("echo \"octunnel-keys v=1 result=refused reason=file\""))
    }

    @Test(
        "revoke removes the key's whole lineage: its line, its successors pending or not, theirs, and the tombstones that link them, also when the key's own line is gone; another lineage and the user's lines stay byte for byte",
        arguments: shells)
    func revokeLineage(shell: String) throws {
        let vps = try KeysHome()
        let stolen = KeysHome.ed25519("laptop"), other = KeysHome.ed25519("other-device")
        let thieves = (1...3).map { KeysHome.ed25519("t\($0)") }
        let tag = { (key: SSHPublicKey) in OctunnelKeyLine.tag(for: key) }
        let root = OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: stolen).line
        let otherLine = OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: other).line
        // The thief's chain: t1 from the stolen key, t2 from t1, both predecessors retired (tombstones), t3 pending on t2.
        let t1 = "#octunnel-retired K=\(tag(thieves[0])) P=\(tag(stolen)) A=20260101"
        let t2 = OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: thieves[1], predecessor: tag(thieves[0]))
            .line
        let t3 = OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: thieves[2], predecessor: tag(thieves[1]))
            .line
        let tomb = "#octunnel-retired K=\(tag(stolen)) P= A=20260101"
        let mine = "\(other.line) mine\n# a comment\r\n"
        let before = mine + "\(tomb)\n\(t1)\n\(otherLine)\n\(t2)\n\(t3)\nlast-no-newline"
        try vps.write(before)
        // The stolen key's line is gone already: only its tag leads to its lineage.
        let script = AuthorizedKeysScript.revoke(tag: tag(stolen), keyBlob: nil, file: ".ssh/authorized_keys")
        let revoked = try vps.run(script: script, shell: shell)
        #expect(
            revoked.stdout
                == "octunnel-keys-removed \(tomb)\noctunnel-keys-removed \(t1)\noctunnel-keys-removed \(t2)\noctunnel-keys-removed \(t3)\n"
                + "octunnel-keys v=1 result=revoked removed=4 left=0\n" && revoked.status == 0, "\(revoked)")
        #expect(try vps.contents() == mine + "\(otherLine)\nlast-no-newline")
        // With the root line there too, and the key in a line of the user's own in authorized_keys2: named, left.
        try vps.write(before.replacingOccurrences(of: tomb, with: root))
        try writeText("# mine\n\(stolen.line) on purpose\n", to: vps.home + "/.ssh/authorized_keys2")
        let again = try vps.run(script: Self.revoke(stolen), shell: shell)
        #expect(AuthorizedKeysReport.parse(again.stdout)?.removed == 4, "\(again)")
        #expect(
            again.stdout.hasSuffix(
                "octunnel-keys-left \(vps.home)/.ssh/authorized_keys2:2\noctunnel-keys v=1 result=revoked removed=4 left=0\n"
            ),
            "\(again)")
        #expect(try readText(vps.home + "/.ssh/authorized_keys2") == "# mine\n\(stolen.line) on purpose\n")
        #expect(try vps.contents() == mine + "\(otherLine)\nlast-no-newline")
    }

    /// The revoke script for `key`'s lineage in the default file.
    static func revoke(_ key: SSHPublicKey) -> String {
        AuthorizedKeysScript.revoke(
            tag: OctunnelKeyLine.tag(for: key), keyBlob: Data(key.blob).base64EncodedString(),
            file: ".ssh/authorized_keys")
    }

    @Test("list leaves out lines over 16 KiB and past the thousandth, and says how many", arguments: shells)
    func listBounded(shell: String) throws {
        let vps = try KeysHome()
        let line = OctunnelKeyLine(role: .tunnel, ends: [Self.forward], key: KeysHome.ed25519("l")).line
        let long = line + " " + String(repeating: "c", count: 17 * 1024)
        try vps.write(String(repeating: line + "\n", count: 1002) + long + "\n")
        let listed = try vps.run(script: AuthorizedKeysScript.list(file: ".ssh/authorized_keys"), shell: shell)
        #expect(listed.stdout.hasSuffix("octunnel-keys v=1 result=listed lines=1000 skipped=3\n"))
        #expect(AuthorizedKeysScript.listedLines(in: listed.stdout).count == 1000)
    }
}
