import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("octunnel keygen and pubkey, run as a user runs them", .ownThreads)
struct KeyCommandTests {
    @Test func keygenPrintsOnlyThePublicLineOnStdout() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"

            let made = try Octunnel.run(["keygen", "--home", home], in: dir)

            #expect(made.status == 0, "\(made)")
            let publicFile = try readText(home + "/id_ed25519.pub")
            #expect(made.stdout == publicFile)
            #expect(made.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 2)
            #expect(made.stdout.hasPrefix("ssh-ed25519 AAAA"))
            #expect(made.stderr.contains(home + "/id_ed25519"))
            #expect(made.stderr.contains(try sshKeygenFingerprint(home + "/id_ed25519.pub")))
            #expect(try mode(of: home) == 0o700)
            #expect(try mode(of: home + "/id_ed25519") == 0o600)
            #expect(try mode(of: home + "/id_ed25519.pub") == 0o644)

            let printed = try Octunnel.run(["pubkey", "--home", home], in: dir)
            #expect(printed.status == 0)
            #expect(printed.stdout == made.stdout)
            #expect(printed.stderr.isEmpty)
            let derived = try sshKeygen(["-y", "-f", home + "/id_ed25519"]).stdout
            #expect(derived.split(separator: " ").prefix(2) == made.stdout.split(separator: " ").prefix(2))
        }
    }

    @Test func keygenTakesAComment() throws {
        try withTemporaryDirectory { dir in
            let made = try Octunnel.run(["keygen", "--home", dir + "/home", "--comment", "laptop key"], in: dir)
            #expect(made.status == 0)
            #expect(made.stdout.hasSuffix(" laptop key\n"))
            #expect(try Octunnel.run(["keygen", "--home", dir + "/other"], in: dir).stdout.contains(" octunnel@"))
        }
    }

    @Test func aSecondKeygenExits73NamingRotateAndChangesNothing() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            try #require(try Octunnel.run(["keygen", "--home", home], in: dir).status == 0)
            let privateBefore = try readBytes(home + "/id_ed25519")
            let publicBefore = try readBytes(home + "/id_ed25519.pub")

            let again = try Octunnel.run(["keygen", "--home", home], in: dir)

            #expect(again.status == 73)
            #expect(again.stdout.isEmpty)
            #expect(again.stderr.contains("--rotate"))
            #expect(try readBytes(home + "/id_ed25519") == privateBefore)
            #expect(try readBytes(home + "/id_ed25519.pub") == publicBefore)
            #expect(!fileExists(home + "/id_ed25519.prev"))
        }
    }

    @Test func keygenRotateKeepsTheOldKeyAndNamesItsFingerprint() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            let first = try Octunnel.run(["keygen", "--home", home], in: dir)
            let oldFingerprint = try sshKeygenFingerprint(home + "/id_ed25519.pub")

            let rotated = try Octunnel.run(["keygen", "--rotate", "--home", home], in: dir)

            #expect(rotated.status == 0, "\(rotated)")
            #expect(rotated.stdout != first.stdout)
            #expect(rotated.stdout == (try readText(home + "/id_ed25519.pub")))
            #expect(rotated.stderr.contains(oldFingerprint))
            #expect(rotated.stderr.contains(home + "/id_ed25519.prev"))
            #expect(try readText(home + "/id_ed25519.prev.pub") == first.stdout)
            #expect(try sshKeygenFingerprint(home + "/id_ed25519.prev") == oldFingerprint)
        }
    }

    @Test func pubkeyWithoutAKeyExits66AndSaysToRunKeygen() throws {
        try withTemporaryDirectory { dir in
            let result = try Octunnel.run(["pubkey", "--home", dir + "/home"], in: dir)

            #expect(result.status == 66)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("octunnel keygen"))
            #expect(!fileExists(dir + "/home"), "a read-only command must not create the home")
        }
    }

    @Test func pubkeyFingerprintPrintsOnlyTheFingerprint() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            _ = try Octunnel.run(["keygen", "--home", home], in: dir)

            let result = try Octunnel.run(["pubkey", "--fingerprint", "--home", home], in: dir)

            #expect(result.status == 0)
            #expect(result.stdout == (try sshKeygenFingerprint(home + "/id_ed25519")) + "\n")
            #expect(result.stdout.hasPrefix("SHA256:"))
            #expect(result.stderr.isEmpty)
        }
    }

    @Test func pubkeyRestrictPrintsALeastPrivilegeLine() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            let line = try Octunnel.run(["keygen", "--home", home], in: dir).stdout

            let restricted = try Octunnel.run(
                ["pubkey", "--restrict", "--remote-port", "19000", "--home", home], in: dir)

            #expect(restricted.status == 0)
            // The forced command answers the rotation verbs for this key's tag and refuses anything else.
            let key = try #require(SSHPublicKey.parse(line: line.trimmingCharacters(in: .whitespacesAndNewlines)))
            let command = OctunnelKeyLine.forcedCommand(
                role: .tunnel, ends: [HostPort(host: "127.0.0.1", port: 19000)],
                tag: OctunnelKeyLine.tag(for: key), added: OctunnelKeyLine.today())
            #expect(
                restricted.stdout.hasPrefix(
                    "restrict,port-forwarding,permitopen=\"127.0.0.1:19000\",permitlisten=\"127.0.0.1:1\",command=\"exec /bin/sh -c 'K=\(OctunnelKeyLine.tag(for: key)) P= A="
                ))
            #expect(
                restricted.stdout
                    == "restrict,port-forwarding,permitopen=\"127.0.0.1:19000\",permitlisten=\"127.0.0.1:1\",command=\"\(command)\" "
                    + line)
            let byDefault = try Octunnel.run(["pubkey", "--restrict", "--home", home], in: dir)
            #expect(
                byDefault.stdout.hasPrefix(
                    "restrict,port-forwarding,permitopen=\"127.0.0.1:18080\",permitlisten=\"127.0.0.1:1\",command=\"exec /bin/sh -c 'K="
                ))
            let ipv6 = try Octunnel.run(
                ["pubkey", "--restrict", "--remote-host", "::1", "--remote-port", "2200", "--home", home], in: dir)
            #expect(
                ipv6.stdout.hasPrefix(
                    "restrict,port-forwarding,permitopen=\"[::1]:2200\",permitlisten=\"127.0.0.1:1\",command=\"exec /bin/sh -c 'K="
                ))
        }
    }

    @Test(arguments: [
        ["pubkey", "--remote-port", "0"],
        ["pubkey", "--remote-port", "65536"],
        ["pubkey", "--fingerprint", "--restrict"],
        ["pubkey", "--remote-host", "bad host"],
        ["keygen", "--comment", "two\nlines"],
        ["keygen", "--no-such-option"],
    ])
    func argumentMistakesExit64(arguments: [String]) throws {
        try withTemporaryDirectory { dir in
            let result = try Octunnel.run(arguments + ["--home", dir + "/home"], in: dir)
            #expect(result.status == 64, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(!result.stderr.isEmpty)
            #expect(!fileExists(dir + "/home/id_ed25519"))
        }
    }

    @Test func aKeyOthersCanReadExits77WithTheChmodToRun() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            _ = try Octunnel.run(["keygen", "--home", home], in: dir)
            try setMode(0o644, of: home + "/id_ed25519")

            let result = try Octunnel.run(["pubkey", "--home", home], in: dir)

            #expect(result.status == 77)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("chmod 600 \(home)/id_ed25519"))
            #expect(try mode(of: home + "/id_ed25519") == 0o644)
        }
    }

    @Test func aCorruptKeyExits65AndIsLeftAlone() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            _ = try Octunnel.run(["keygen", "--home", home], in: dir)
            let corrupt =
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
            try writeText(corrupt, to: home + "/id_ed25519")

            let result = try Octunnel.run(["pubkey", "--home", home], in: dir)
            let rotate = try Octunnel.run(["keygen", "--rotate", "--home", home], in: dir)

            #expect(result.status == 65)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains(home + "/id_ed25519"))
            #expect(rotate.status == 65, "rotating must not retire a key it cannot read")
            #expect(try readText(home + "/id_ed25519") == corrupt)
        }
    }

    @Test func aTruncatedKeyStopsTunnelUpAndCheckWith65BeforeAnyNetworkWork() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            _ = try Octunnel.run(["keygen", "--home", home], in: dir)
            let whole = try readBytes(home + "/id_ed25519")
            let half = Array(whole.prefix(whole.count / 2))
            try writeText(String(decoding: half, as: UTF8.self), to: home + "/id_ed25519")
            // Port 1 on loopback: if the key were not checked first, this would be a tcp failure (69).
            for command in [["tunnel", "up"], ["tunnel", "check"]] {
                let result = try Octunnel.run(command + ["--home", home, "root@127.0.0.1:1"], in: dir)
                #expect(result.status == 65, "\(command): \(result.stderr)")
                #expect(result.stderr.contains(home + "/id_ed25519"))
                #expect(
                    result.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1,
                    "\(result.stderr)")
            }
            #expect(try readBytes(home + "/id_ed25519") == half)
        }
    }

    @Test func keygenTightensAHomeOpenToOthers() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
            try setMode(0o755, of: home)

            let result = try Octunnel.run(["keygen", "--home", home], in: dir)

            #expect(result.status == 0)
            #expect(result.stderr.contains("tightened"))
            #expect(try mode(of: home) == 0o700)
        }
    }

    @Test func theHomeComesFromTheFlagThenOCTUNNEL_HOMEThenXDG() throws {
        try withTemporaryDirectory { dir in
            let fromEnvironment = dir + "/env-home"
            let environment = Octunnel.environment(
                home: dir, ["OCTUNNEL_HOME": fromEnvironment, "XDG_CONFIG_HOME": dir + "/xdg"])

            let made = try Octunnel.run(["keygen"], in: dir, environment: environment)

            #expect(made.status == 0, "\(made)")
            #expect(try readText(fromEnvironment + "/id_ed25519.pub") == made.stdout)
            #expect(!fileExists(dir + "/xdg"))
            #expect(try Octunnel.run(["pubkey"], in: dir, environment: environment).stdout == made.stdout)
            #expect(
                try Octunnel.run(["pubkey", "--home", dir + "/flag-home"], in: dir, environment: environment).status
                    == 66)

            let xdgOnly = Octunnel.environment(home: dir, ["XDG_CONFIG_HOME": dir + "/xdg"])
            #expect(try Octunnel.run(["keygen"], in: dir, environment: xdgOnly).status == 0)
            #expect(fileExists(dir + "/xdg/octunnel/id_ed25519"))
            #expect(try Octunnel.run(["keygen"], in: dir, environment: Octunnel.environment(home: dir)).status == 0)
            #expect(fileExists(dir + "/.config/octunnel/id_ed25519"))
        }
    }
}
