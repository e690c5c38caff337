import Foundation
import OCTunnelTestSupport
import Testing

/// A host key made by ssh-keygen: its known_hosts key part (`type base64`) and fingerprint.
struct HostKey {
    let typeAndKey: String
    let fingerprint: String

    init(type: String, in dir: String) throws {
        let path = dir + "/host_\(type)_\(UInt32.random(in: 0...UInt32.max))"
        try sshKeygen(["-q", "-t", type, "-N", "", "-C", "", "-f", path])
        typeAndKey = try readText(path + ".pub").split(separator: " ").prefix(2).joined(separator: " ")
        fingerprint = try sshKeygenFingerprint(path + ".pub")
    }

    var type: String { String(typeAndKey.split(separator: " ")[0]) }
}

/// octunnel's home in `dir`, made, with `text` as its known_hosts file; its path.
private func homeWithKnownHosts(in dir: String, _ text: String) throws -> String {
    let home = dir + "/home"
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
    try writeText(text, to: home + "/known_hosts")
    return home
}

@Suite("octunnel trust list and trust reset", .ownThreads)
struct TrustCommandTests {
    @Test func listPrintsOneRowPerEntry() throws {
        try withTemporaryDirectory { dir in
            let ed25519 = try HostKey(type: "ed25519", in: dir)
            let ecdsa = try HostKey(type: "ecdsa", in: dir)
            let home = try homeWithKnownHosts(
                in: dir,
                """
                # mine
                [127.0.0.1]:2222 \(ed25519.typeAndKey)
                vps.example.com \(ecdsa.typeAndKey)
                [::1]:2222 \(ed25519.typeAndKey)

                """)

            let result = try Octunnel.run(["trust", "list", "--home", home], in: dir)

            #expect(result.status == 0, "\(result)")
            #expect(
                result.stdout == """
                    127.0.0.1:2222 ssh-ed25519 \(ed25519.fingerprint)
                    vps.example.com:22 \(ecdsa.type) \(ecdsa.fingerprint)
                    [::1]:2222 ssh-ed25519 \(ed25519.fingerprint)

                    """)
            #expect(result.stderr.isEmpty)
        }
    }

    @Test func listWithNothingTrustedSaysSoOnStderr() throws {
        try withTemporaryDirectory { dir in
            let result = try Octunnel.run(["trust", "list", "--home", dir + "/home"], in: dir)
            #expect(result.status == 0)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("No trusted hosts"))
        }
    }

    @Test func listWarnsAboutUnreadableLinesAndStillLists() throws {
        try withTemporaryDirectory { dir in
            let key = try HostKey(type: "ed25519", in: dir)
            let home = try homeWithKnownHosts(in: dir, "garbage\nvps \(key.typeAndKey)\n")

            let result = try Octunnel.run(["trust", "list", "--home", home], in: dir)

            #expect(result.status == 0)
            #expect(result.stdout == "vps:22 ssh-ed25519 \(key.fingerprint)\n")
            #expect(result.stderr.contains("line 1"))
        }
    }

    @Test func resetRemovesExactlyThatHostAndPort() throws {
        try withTemporaryDirectory { dir in
            let key = try HostKey(type: "ed25519", in: dir)
            let keep = "# mine\n::1 \(key.typeAndKey)\n[::1]:2200 \(key.typeAndKey)\n"
            let home = try homeWithKnownHosts(
                in: dir, keep.replacingOccurrences(of: "# mine\n", with: "# mine\n[::1]:2222 \(key.typeAndKey)\n"))

            let result = try Octunnel.run(["trust", "reset", "[::1]:2222", "--home", home], in: dir)

            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("Removed 1 entry"))
            #expect(try readText(home + "/known_hosts") == keep)

            let again = try Octunnel.run(["trust", "reset", "[::1]:2222", "--home", home], in: dir)
            #expect(again.status == 0)
            #expect(again.stderr.contains("Removed 0"))
            #expect(try readText(home + "/known_hosts") == keep)
        }
    }

    @Test func resetOfAHostWithoutAPortMeansPort22() throws {
        try withTemporaryDirectory { dir in
            let key = try HostKey(type: "ed25519", in: dir)
            let home = try homeWithKnownHosts(in: dir, "vps \(key.typeAndKey)\n[vps]:2222 \(key.typeAndKey)\n")

            let result = try Octunnel.run(["trust", "reset", "vps", "--home", home], in: dir)

            #expect(result.status == 0)
            #expect(try readText(home + "/known_hosts") == "[vps]:2222 \(key.typeAndKey)\n")
        }
    }

    @Test func resetWithNoKnownHostsFileRemovesNothing() throws {
        try withTemporaryDirectory { dir in
            let result = try Octunnel.run(["trust", "reset", "vps:2222", "--home", dir + "/home"], in: dir)
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.contains("Removed 0"))
            #expect(!fileExists(dir + "/home/known_hosts"))
        }
    }

    @Test(arguments: ["bad host", "host:99999", "host:0", "[::1", "a,b", ""])
    func resetRejectsABadHostWithExit64(target: String) throws {
        try withTemporaryDirectory { dir in
            let result = try Octunnel.run(["trust", "reset", target, "--home", dir + "/home"], in: dir)
            #expect(result.status == 64, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("HOST[:PORT]"))
        }
    }
}
