import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The rotation verbs of both roles' key lines (`KeyRotationProgram`), run as sshd runs the
/// forced command, under dash, bash and busybox sh, against authorized_keys files in temp
/// directories: what they write, byte for byte, and everything they refuse, file untouched.
@Suite("the key lines' rotation verbs on the VPS", .ownThreads)
struct KeyRotationProgramTests {
    static let shells = KeysHome.shells
    static let forward = HostPort(host: "127.0.0.1", port: 18080)

    /// A file of a VPS user: someone's own key, the octunnel line of `key` (for `role`), a blank
    /// line, a CRLF line and a last line without a newline, all of which must stay as they are.
    static func file(around line: String, other: SSHPublicKey = KeysHome.ed25519("admin")) -> String {
        "\(other.line)\n\(line)\n\n# a comment\r\n"
            + "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBSc/yJtN5yOjf4GFjCUkIaFw+XUX3bQQK/e3QbOx9wF last-no-newline"
    }

    static func line(_ key: SSHPublicKey, role: Role, predecessor: String? = nil, added: String? = nil) -> String {
        OctunnelKeyLine(role: role, ends: [forward], key: key, predecessor: predecessor, added: added).line
    }

    /// A VPS user whose `file(around:)` holds the tunnel line of `old`, and that line.
    static func home(withTunnelLineOf old: SSHPublicKey) throws -> (vps: KeysHome, oldLine: String) {
        let vps = try KeysHome()
        let oldLine = line(old, role: .tunnel)
        try vps.write(file(around: oldLine))
        return (vps, oldLine)
    }

    @Test(
        "add, then retire: the new key's line, rendered as octunnel renders it (the old comment, P the old tag, A today), stands where the old one stood; every other byte is as it was",
        arguments: shells, [Role.tunnel, .home])
    func addThenRetire(shell: String, role: Role) throws {
        let vps = try KeysHome()
        let old = KeysHome.ed25519("laptop@old"),
            new = SSHPublicKey(type: "ssh-ed25519", blob: KeysHome.ed25519("").blob, comment: "ignored")
        let oldLine = Self.line(old, role: role, added: "20250101")
        let before = Self.file(around: oldLine)
        try vps.write(before, mode: 0o640)
        let added = try vps.run(line: oldLine, command: KeyRotationVerb.addCommand(for: new), shell: shell)
        #expect(added.stdout == "octunnel-keys v=1 result=added\n" && added.status == 0, "\(added)")
        // The successor: the old line's options and program, the new key, the old comment.
        let successor = OctunnelKeyLine(
            role: role, ends: [Self.forward], key: SSHPublicKey(type: new.type, blob: new.blob, comment: "laptop@old"),
            predecessor: OctunnelKeyLine.tag(for: old), added: OctunnelKeyLine.today()
        ).line
        #expect(
            try vps.contents()
                == before.replacingOccurrences(of: oldLine + "\n", with: oldLine + "\n" + successor + "\n"))
        #expect(try mode(of: vps.file) & 0o777 == 0o640)
        // Until its predecessor is retired, the successor has no successor of its own.
        let early = try vps.run(
            line: successor, command: KeyRotationVerb.addCommand(for: KeysHome.ed25519("")), shell: shell)
        #expect(early.stdout == "octunnel-keys v=1 result=refused reason=pending\n" && early.status == 1, "\(early)")
        #expect(
            try vps.contents()
                == before.replacingOccurrences(of: oldLine + "\n", with: oldLine + "\n" + successor + "\n"))
        let parsed = try #require(OctunnelKeyLine.parse(successor))
        #expect(
            parsed.tag == OctunnelKeyLine.tag(for: new) && parsed.predecessor == OctunnelKeyLine.tag(for: old)
                && parsed.role == role)
        let retired = try vps.run(line: oldLine, command: KeyRotationVerb.retire, shell: shell)
        #expect(
            retired.stdout == "octunnel-keys v=1 result=retired successor=\(OctunnelKeyLine.tag(for: new))\n"
                && retired.status == 0, "\(retired)")
        // Where the old line stood, its tombstone: the lineage stays traceable (keys revoke), and sshd skips a comment.
        let tombstone = "#octunnel-retired K=\(OctunnelKeyLine.tag(for: old)) P= A=\(OctunnelKeyLine.today())"
        #expect(try vps.contents() == before.replacingOccurrences(of: oldLine, with: tombstone + "\n" + successor))
        // The new line rotates in turn; the old one, gone, can do nothing more.
        let again = try vps.run(line: oldLine, command: KeyRotationVerb.retire, shell: shell)
        #expect(again.stdout == "octunnel-keys v=1 result=refused reason=own\n" && again.status == 1)
        let third = KeysHome.ed25519("")
        #expect(
            try vps.run(line: successor, command: KeyRotationVerb.addCommand(for: third), shell: shell).stdout
                == "octunnel-keys v=1 result=added\n")
        #expect(
            try vps.run(line: successor, command: KeyRotationVerb.retire, shell: shell).stdout
                == "octunnel-keys v=1 result=retired successor=\(OctunnelKeyLine.tag(for: third))\n")
        #expect(
            try vps.contents().components(
                separatedBy: "K=\(OctunnelKeyLine.tag(for: third)) P=\(OctunnelKeyLine.tag(for: new)) "
            ).count == 2)
        #expect(!fileExists(vps.file + ".octunnel-lock"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: vps.home + "/.ssh") == ["authorized_keys"])
    }

    @Test(
        "add twice is one successor (present); an add with another key never replaces it (held, exit 1, file untouched): a thief's add cannot take the owner's place, nor the owner's the thief's",
        arguments: shells)
    func oneSuccessor(shell: String) throws {
        let old = KeysHome.ed25519("old"), first = KeysHome.ed25519(""), second = KeysHome.ed25519("")
        let (vps, oldLine) = try Self.home(withTunnelLineOf: old)
        #expect(
            try vps.run(line: oldLine, command: KeyRotationVerb.addCommand(for: first), shell: shell).stdout
                == "octunnel-keys v=1 result=added\n")
        let once = try vps.contents()
        let present = try vps.run(line: oldLine, command: KeyRotationVerb.addCommand(for: first), shell: shell)
        #expect(present.stdout == "octunnel-keys v=1 result=present\n" && present.status == 0)
        #expect(try vps.contents() == once)
        let held = try vps.run(line: oldLine, command: KeyRotationVerb.addCommand(for: second), shell: shell)
        #expect(held.stdout == "octunnel-keys v=1 result=refused reason=held\n" && held.status == 1, "\(held)")
        #expect(try vps.contents() == once)
        // The retire names the successor that stays.
        let retired = try vps.run(line: oldLine, command: KeyRotationVerb.retire, shell: shell)
        #expect(
            retired.stdout == "octunnel-keys v=1 result=retired successor=\(OctunnelKeyLine.tag(for: first))\n",
            "\(retired)")
        #expect(AuthorizedKeysReport.parse(retired.stdout)?.successor == OctunnelKeyLine.tag(for: first))
    }

    @Test(
        "the new key already signs in from another file sshd reads (authorized_keys2, any authorized_keys* beside the file): refused with the very answer a held succession gets, file untouched",
        arguments: shells)
    func duplicateElsewhere(shell: String) throws {
        let old = KeysHome.ed25519("old"), shellKey = KeysHome.ed25519("my-shell-key"), fresh = KeysHome.ed25519("")
        let (vps, oldLine) = try Self.home(withTunnelLineOf: old)
        let before = try vps.contents()
        for name in ["authorized_keys2", "authorized_keys.extra"] {
            let other = vps.home + "/.ssh/" + name
            try writeText("# mine\nfrom=\"10.0.0.0/8\"\t\(shellKey.line)\n", to: other)
            let refused = try vps.run(line: oldLine, command: KeyRotationVerb.addCommand(for: shellKey), shell: shell)
            #expect(
                refused.stdout == "octunnel-keys v=1 result=refused reason=held\n" && refused.status == 1,
                "\(name): \(refused)")
            #expect(try vps.contents() == before)
            try FileManager.default.removeItem(atPath: other)
        }
        // Nothing else holds it: added.
        #expect(
            try vps.run(line: oldLine, command: KeyRotationVerb.addCommand(for: fresh), shell: shell).stdout
                == "octunnel-keys v=1 result=added\n")
    }

    /// What a stolen key, or anyone who can send a command, might try: each refused, with its
    /// reason, exit 1, and the file byte for byte as it was.
    static func hostileCommands(old: SSHPublicKey, other: SSHPublicKey) -> [(String, String)] {
        let new = KeysHome.ed25519("")
        let tag = OctunnelKeyLine.tag(for: new), blob = Data(new.blob).base64EncodedString()
        let rsa = KeysHome.rsa(), ecdsa = KeysHome.ecdsa()
        let short = SSHPublicKey(type: "ssh-ed25519", blob: Array(new.blob.prefix(48)))
        // An Ed25519-sized blob that is another type's inside (its first bytes name ecdsa).
        let inside = SSHPublicKey(type: "ssh-ed25519", blob: Array(ecdsa.blob.prefix(51)))
        return [
            ("\(KeyRotationVerb.add) \(OctunnelKeyLine.tag(for: rsa)) \(KeysHome.typeAndBlob(rsa))", "type"),
            ("\(KeyRotationVerb.add) \(OctunnelKeyLine.tag(for: ecdsa)) \(KeysHome.typeAndBlob(ecdsa))", "type"),
            // An Ed25519 blob under another type's name.
            ("\(KeyRotationVerb.add) \(tag) ssh-rsa \(blob)", "type"),
            ("\(KeyRotationVerb.add) \(tag) restrict,command=\"sh\" ssh-ed25519 \(blob)", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 \(blob) restrict,command=\"sh\"", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 \(blob.prefix(30)) \(blob.dropFirst(30))", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 \(blob.prefix(30))\"\(blob.dropFirst(30))", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 \(blob)\nrestrict,command=\"sh\" ssh-ed25519 \(blob)", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 \(blob)\\nrestrict ssh-ed25519 \(blob)", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 \(blob)\n\(KeyRotationVerb.retire)", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519\t\(blob)", "input"),
            ("\(KeyRotationVerb.add)  \(tag) ssh-ed25519 \(blob)", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 \(blob) ", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 $(touch${IFS}canary)", "input"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519", "input"),
            ("\(KeyRotationVerb.retire) now", "input"),
            ("octunnel-rotate-everything", "input"),
            // The key of another line (the admin's own), with its right tag: the answer a held
            // succession gets, so it says nothing of which keys are authorized.
            ("\(KeyRotationVerb.add) \(OctunnelKeyLine.tag(for: other)) \(KeysHome.typeAndBlob(other))", "held"),
            ("\(KeyRotationVerb.add) \(OctunnelKeyLine.tag(for: old)) \(KeysHome.typeAndBlob(old))", "same"),
            ("\(KeyRotationVerb.add) \(OctunnelKeyLine.tag(for: other)) ssh-ed25519 \(blob)", "tag"),
            ("\(KeyRotationVerb.add) \(tag.uppercased()) ssh-ed25519 \(blob)", "tag"),
            ("\(KeyRotationVerb.add) \(tag.prefix(15)) ssh-ed25519 \(blob)", "tag"),
            ("\(KeyRotationVerb.add) \(OctunnelKeyLine.tag(for: short)) \(KeysHome.typeAndBlob(short))", "length"),
            ("\(KeyRotationVerb.add) \(OctunnelKeyLine.tag(for: inside)) \(KeysHome.typeAndBlob(inside))", "type"),
            ("\(KeyRotationVerb.add) \(tag) ssh-ed25519 \(blob.dropLast(2))=x", "key"),
            (KeyRotationVerb.retire, "successor"),
            (String(repeating: "a", count: 2049), "long"),
            (KeyRotationVerb.addCommand(for: new) + String(repeating: " ", count: 2048), "long"),
        ]
    }

    @Test(
        "hostile commands to either role's line (another key type, options or a second line smuggled in the key, another line's key, a tag not the blob's, an over-long command, retire without a successor): refused, file untouched, nothing run",
        arguments: shells, [Role.tunnel, .home])
    func hostileCommands(shell: String, role: Role) throws {
        let vps = try KeysHome()
        let old = KeysHome.ed25519("old"), other = KeysHome.ed25519("admin")
        let oldLine = Self.line(old, role: role)
        let before = Self.file(around: oldLine, other: other)
        try vps.write(before)
        for (command, reason) in Self.hostileCommands(old: old, other: other) {
            let result = try vps.run(line: oldLine, command: command, shell: shell)
            #expect(
                result.stdout == "octunnel-keys v=1 result=refused reason=\(reason)\n" && result.status == 1,
                "\(command.prefix(120).debugDescription): \(result)")
            #expect(try vps.contents() == before, "\(command.prefix(120).debugDescription)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: vps.home + "/.ssh") == ["authorized_keys"])
        #expect(!fileExists(vps.root.file("canary")) && !fileExists(vps.home + "/canary"))
    }

    @Test(
        "a 1 MB command (and one of 120 KB in the environment, as sshd passes it) is refused before any command runs, at once",
        arguments: shells)
    func megabyteCommand(shell: String) throws {
        let (vps, oldLine) = try Self.home(withTunnelLineOf: KeysHome.ed25519("old"))
        let before = try vps.contents()
        // Linux caps one environment string at 128 KiB (MAX_ARG_STRLEN): the megabyte is set by
        // the shell itself from a file, then the program runs in that shell.
        let big = vps.root.file("big")
        try writeText(KeyRotationVerb.add + " " + String(repeating: "A", count: 1 << 20), to: big)
        let (path, words, environment) = try vps.invocation(shell: shell, command: nil)
        let started = Date()
        let result = try run(
            path, words + ["-c", "SSH_ORIGINAL_COMMAND=$(cat \(big));" + (try KeysHome.program(of: oldLine))],
            environment: environment)
        #expect(result.stdout == "octunnel-keys v=1 result=refused reason=long\n" && result.status == 1, "\(result)")
        #expect(Date().timeIntervalSince(started) < 10)
        let env = try vps.run(
            line: oldLine, command: KeyRotationVerb.add + " " + String(repeating: "A", count: 120 * 1024), shell: shell)
        #expect(env.stdout == "octunnel-keys v=1 result=refused reason=long\n" && env.status == 1, "\(env)")
        #expect(try vps.contents() == before)
    }

    @Test(
        "a plain login (no command) or any command on the laptop's line: refused, exit 1, as /bin/false; on the home line it is the reclaim program's refusal",
        arguments: shells)
    func plainLogin(shell: String) throws {
        let vps = try KeysHome()
        let laptop = Self.line(KeysHome.ed25519("l"), role: .tunnel),
            home = Self.line(KeysHome.ed25519("h"), role: .home)
        try vps.write(laptop + "\n" + home + "\n")
        let before = try vps.contents()
        for command in [nil, "", "echo RAN", "/bin/sh", "octunnel-reclaim", "scp -t ."] as [String?] {
            let result = try vps.run(line: laptop, command: command, shell: shell)
            #expect(
                result.stdout == "octunnel-keys v=1 result=refused reason=verb\n" && result.status == 1,
                "\(command ?? "(none)"): \(result)")
        }
        let reclaim = try vps.run(line: home, command: nil, shell: shell)
        #expect(
            reclaim.stdout == "octunnel-keys v=1 result=refused reason=verb\n"
                || reclaim.stdout.hasPrefix("octunnel-reclaim v=1 result=refused "),
            "\(reclaim)")
        #expect(reclaim.status == 1)
        #expect(try vps.contents() == before)
    }

    @Test(
        "a symlinked authorized_keys or ~/.ssh, a file that is not a regular file, a line that is not alone with its tag: refused, nothing written",
        arguments: shells)
    func unsafeFiles(shell: String) throws {
        let old = KeysHome.ed25519("old")
        let oldLine = Self.line(old, role: .tunnel)
        let add = KeyRotationVerb.addCommand(for: KeysHome.ed25519(""))
        // authorized_keys a symlink to a real file with the line.
        let linked = try KeysHome()
        let target = linked.root.file("elsewhere")
        try writeText(oldLine + "\n", to: target)
        try FileManager.default.createSymbolicLink(atPath: linked.file, withDestinationPath: target)
        #expect(
            try linked.run(line: oldLine, command: add, shell: shell).stdout
                == "octunnel-keys v=1 result=refused reason=symlink\n")
        #expect(try readText(target) == oldLine + "\n")
        // ~/.ssh a symlink.
        let dir = try KeysHome(ssh: false)
        try FileManager.default.createDirectory(atPath: dir.root.file("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: dir.home + "/.ssh", withDestinationPath: dir.root.file("real"))
        try writeText(oldLine + "\n", to: dir.root.file("real/authorized_keys"))
        #expect(
            try dir.run(line: oldLine, command: add, shell: shell).stdout
                == "octunnel-keys v=1 result=refused reason=symlink\n")
        #expect(try readText(dir.root.file("real/authorized_keys")) == oldLine + "\n")
        // A directory.
        let directory = try KeysHome()
        try FileManager.default.createDirectory(atPath: directory.file, withIntermediateDirectories: true)
        #expect(
            try directory.run(line: oldLine, command: add, shell: shell).stdout
                == "octunnel-keys v=1 result=refused reason=notfile\n")
        // Two lines carry the tag (the line copied by hand onto a second key): which is its own is unknown.
        let twice = try KeysHome()
        let copy = oldLine.replacingOccurrences(
            of: Data(old.blob).base64EncodedString(), with: Data(KeysHome.ed25519("").blob).base64EncodedString())
        try twice.write(oldLine + "\n" + copy + "\n")
        #expect(
            try twice.run(line: oldLine, command: add, shell: shell).stdout
                == "octunnel-keys v=1 result=refused reason=own\n")
        #expect(try twice.contents() == oldLine + "\n" + copy + "\n")
        // Only the copy with another key: its key does not hash to the tag.
        try twice.write(copy + "\n")
        #expect(
            try twice.run(line: copy, command: add, shell: shell).stdout
                == "octunnel-keys v=1 result=refused reason=own\n")
        // A NUL in the file (awk would cut the line there).
        try twice.write(oldLine + "\nssh-ed25519 AAAA\0x\n")
        #expect(
            try twice.run(line: oldLine, command: add, shell: shell).stdout
                == "octunnel-keys v=1 result=refused reason=binary\n")
        // A line printed without a tag (no key at hand) works, but cannot rotate.
        let untagged =
            OctunnelKeyLine.options(
                role: .tunnel, ends: [Self.forward],
                command: OctunnelKeyLine.forcedCommand(role: .tunnel, ends: [Self.forward], tag: nil, added: "20260101")
            ) + " " + old.line
        try twice.write(untagged + "\n")
        #expect(
            try twice.run(line: untagged, command: add, shell: shell).stdout
                == "octunnel-keys v=1 result=refused reason=untagged\n")
        #expect(try twice.contents() == untagged + "\n")
    }

    @Test(
        "another writer holds octunnel's lock: busy after a second, nothing written; a lock left by a crashed edit (older than 60 s) is taken over",
        arguments: shells)
    func lockHeld(shell: String) throws {
        let (vps, oldLine) = try Self.home(withTunnelLineOf: KeysHome.ed25519("old"))
        let before = try vps.contents()
        let lock = vps.file + ".octunnel-lock"
        try FileManager.default.createDirectory(atPath: lock, withIntermediateDirectories: false)
        let add = KeyRotationVerb.addCommand(for: KeysHome.ed25519(""))
        let busy = try vps.run(line: oldLine, command: add, shell: shell)
        #expect(busy.stdout == "octunnel-keys v=1 result=refused reason=busy\n" && busy.status == 1, "\(busy)")
        #expect(try vps.contents() == before && fileExists(lock))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: lock)
        let taken = try vps.run(line: oldLine, command: add, shell: shell)
        #expect(taken.stdout == "octunnel-keys v=1 result=added\n", "\(taken)")
        #expect(!fileExists(lock))
    }

    /// A Unix socket bound at `path` and left there, as `ssh -R PATH:…` leaves one (python3's socket module).
    static func plantSocket(at path: String) throws {
        let python = "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw HarnessError("no python3 to bind a Unix socket")
        }
        let bound = try run(python, ["-c", "import socket,sys;socket.socket(socket.AF_UNIX).bind(sys.argv[1])", path])
        guard bound.status == 0 else { throw HarnessError("cannot bind \(path): \(bound)") }
    }

    @Test(
        "what a restricted key can leave at the lock (a socket, a file, a link, a socket inside a lock that keeps its directory fresh) holds no edit: removed at once, or taken over once 60 s old",
        arguments: shells)
    func lockPlanted(shell: String) throws {
        let (vps, oldLine) = try Self.home(withTunnelLineOf: KeysHome.ed25519("old"))
        let lock = vps.file + ".octunnel-lock"
        let plants: [(String, () throws -> Void)] = [
            ("socket", { try Self.plantSocket(at: lock) }),
            ("file", { try writeText("x", to: lock) }),
            (
                "dangling link",
                {
                    try FileManager.default.createSymbolicLink(
                        atPath: lock, withDestinationPath: vps.root.file("nowhere"))
                }
            ),
            (
                "link to a directory",
                { try FileManager.default.createSymbolicLink(atPath: lock, withDestinationPath: vps.root.path) }
            ),
            // A crashed edit's lock, 2 minutes old by the time it was taken, with sockets planted
            // inside since: the directory itself is fresh, and not empty.
            (
                "stale lock with sockets inside",
                {
                    try FileManager.default.createDirectory(atPath: lock, withIntermediateDirectories: false)
                    try writeText("", to: lock + "/t")
                    try FileManager.default.setAttributes(
                        [.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: lock + "/t")
                    try Self.plantSocket(at: lock + "/s")
                }
            ),
        ]
        for (name, plant) in plants {
            try vps.write(Self.file(around: oldLine))
            try plant()
            let started = Date()
            let added = try vps.run(
                line: oldLine, command: KeyRotationVerb.addCommand(for: KeysHome.ed25519("")), shell: shell)
            #expect(added.stdout == "octunnel-keys v=1 result=added\n", "\(name): \(added)")
            #expect(Date().timeIntervalSince(started) < 30, "\(name)")
            #expect(
                !fileExists(lock) && (try? FileManager.default.destinationOfSymbolicLink(atPath: lock)) == nil,
                "\(name)")
            #expect(fileExists(vps.root.path), "\(name): the link's target went")
        }
        // A lock another edit holds right now (its time file fresh) still says busy.
        try FileManager.default.createDirectory(atPath: lock, withIntermediateDirectories: false)
        try writeText("", to: lock + "/t")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: lock)
        let busy = try vps.run(line: oldLine, command: KeyRotationVerb.retire, shell: shell)
        #expect(busy.stdout == "octunnel-keys v=1 result=refused reason=busy\n", "\(busy)")
    }

    @Test(
        "the file changed by a writer that takes no lock, between the program's read and its rename: busy, and the other writer's change is what stays",
        arguments: shells)
    func changedUnderneath(shell: String) throws {
        let (vps, oldLine) = try Self.home(withTunnelLineOf: KeysHome.ed25519("old"))
        let before = try vps.contents()
        // The other writer is an editor that saves authorized_keys without octunnel's lock, at
        // the worst moment: after the program read the file and before it renames its new one
        // over it. It is put there by PATH, not by anything in the program: a `sha256sum` that
        // appends a line to the file on its second run (the program's first hash after its
        // read, of its own line's key), then hashes as the real one. (Waiting on inotify for the
        // read instead lost the race on a loaded machine: the program was done first.)
        let appended = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE0gAnOtHeRwRiTeR7tAkEsNoLoCk/XxXxXxXxXxXxXx editor\n"
        let writer = vps.root.file("writer")
        try FileManager.default.createDirectory(atPath: writer, withIntermediateDirectories: true)
        let real = shell == RecordedProc.busybox ? "\(RecordedProc.busybox) sha256sum" : "/usr/bin/sha256sum"
        try writeText(
            "#!/bin/sh\nn=$(cat '\(writer)/count' 2>/dev/null || echo 0); n=$((n+1)); echo $n >'\(writer)/count'\n"
                + "[ $n = 2 ] && printf '%s' '\(appended)' >>'\(vps.file)'\nexec \(real) \"$@\"\n",
            to: writer + "/sha256sum", mode: 0o755)
        var (path, words, environment) = try vps.invocation(
            shell: shell, command: KeyRotationVerb.addCommand(for: KeysHome.ed25519("")))
        environment["PATH"] = writer + ":" + (environment["PATH"] ?? "")
        let program = try RunningProcess(
            path, words + ["-c", try KeysHome.program(of: oldLine)], environment: environment)
        defer { program.stopGracefullyOrKill() }
        #expect(program.waitForExit(timeout: 20) == 1)
        #expect(program.stdout == ["octunnel-keys v=1 result=refused reason=busy"], "\(program.stderrText)")
        #expect(try vps.contents() == before + appended)
        #expect(try FileManager.default.contentsOfDirectory(atPath: vps.home + "/.ssh") == ["authorized_keys"])
        #expect(try readText(writer + "/count").hasPrefix("2"))
    }

    @Test("the command octunnel sends: the verb, the key's tag, its type and base64")
    func addCommand() {
        let key = SSHPublicKey(ed25519: Array(repeating: 7, count: 32), comment: "x")
        #expect(
            KeyRotationVerb.addCommand(for: key)
                == "octunnel-rotate-add \(OctunnelKeyLine.tag(for: key)) \(KeysHome.typeAndBlob(key))")
        #expect(KeyRotationVerb.addCommand(for: key).utf8.count < KeyRotationProgram.maximumCommand)
    }
}
