import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A resolver whose HOME is a temp directory (never the real ~/.ssh), with or without the ssh
/// client, handed to `body` with that directory.
private func withResolver(ssh: Bool, _ body: (String, SSHConfigResolver) throws -> Void) throws {
    try withTemporaryDirectory { dir in
        try FileManager.default.createDirectory(atPath: dir + "/.ssh", withIntermediateDirectories: true)
        try body(dir, SSHConfigResolver(home: dir, sshPath: ssh ? "/usr/bin/ssh" : nil))
    }
}

@Suite("~/.ssh/config resolution", .ownThreads)
struct SSHConfigResolverTests {
    static let config = """
        # first value wins, as in ssh_config(5)
        Host vps
          HostName %h.example.net
          User deploy
          Port 2200
          IdentityFile ~/.ssh/vps_%r_%h
        Host *.lan !printer.lan
          User=lanuser
          Port = 2022
        Host v?s
          User second
          Port 9
        Host jump*
          ProxyJump bastion
        Host *
          ForwardAgent no

        """

    @Test(
        "HostName (%h), User, Port and IdentityFile (~, %r, %h) of a Host block; later blocks do not override",
        arguments: [true, false])
    func aliasResolves(ssh: Bool) throws {
        try withResolver(ssh: ssh) { dir, resolver in
            try writeText(Self.config, to: dir + "/.ssh/config")
            try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-f", dir + "/.ssh/vps_deploy_vps.example.net"])
            let resolved = try resolver.resolve("vps")
            #expect(resolved.target == SSHTarget(user: "deploy", host: "vps.example.net", port: 2200))
            #expect(resolved.identityFile == dir + "/.ssh/vps_deploy_vps.example.net")
            #expect(resolved.changedTarget)
            #expect(resolved.source == (ssh ? .ssh : .file(dir + "/.ssh/config")))
            #expect(resolved.ignored == (ssh ? [] : ["forwardagent"]))
        }
    }

    @Test("a user or port in the target wins over the config, as on ssh's command line", arguments: [true, false])
    func explicitWins(ssh: Bool) throws {
        try withResolver(ssh: ssh) { dir, resolver in
            try writeText(Self.config, to: dir + "/.ssh/config")
            #expect(
                try resolver.resolve("root@vps:22").target == SSHTarget(user: "root", host: "vps.example.net", port: 22)
            )
            #expect(try resolver.resolve("nas.lan").target == SSHTarget(user: "lanuser", host: "nas.lan", port: 2022))
            // Negated: printer.lan falls through to the defaults.
            #expect(
                try resolver.resolve("printer.lan").target
                    == SSHTarget(user: currentUserName(), host: "printer.lan", port: 22))
            #expect(
                try resolver.resolve("[::1]:2222").target == SSHTarget(user: currentUserName(), host: "::1", port: 2222)
            )
        }
    }

    @Test("a plain target with no config, or no matching block, is unchanged", arguments: [true, false])
    func plainTargetUnchanged(ssh: Bool) throws {
        try withResolver(ssh: ssh) { dir, resolver in
            let alone = try resolver.resolve("alice@198.51.100.7:2222")
            #expect(alone.target == SSHTarget(user: "alice", host: "198.51.100.7", port: 2222))
            #expect(alone.identityFile == nil && !alone.changedTarget)
            try writeText(Self.config, to: dir + "/.ssh/config")
            let other = try resolver.resolve("alice@198.51.100.7:2222")
            #expect(other.target == alone.target && other.identityFile == nil && !other.changedTarget)
        }
    }

    @Test("ProxyJump or ProxyCommand for the host is refused with exit 78", arguments: [true, false])
    func proxyRefused(ssh: Bool) throws {
        try withResolver(ssh: ssh) { dir, resolver in
            try writeText(Self.config + "Host pc\n  ProxyCommand nc %h %p\n", to: dir + "/.ssh/config")
            for name in ["jumphost", "pc"] {
                #expect {
                    try resolver.resolve(name)
                } throws: { error in
                    guard let error = error as? SSHConfigError, case .unsupportedSSHConfig = error else { return false }
                    return error.exitStatus == .config && error.exitStatus.rawValue == 78
                }
            }
        }
    }

    @Test(
        "IdentityFiles that are missing or not Ed25519 are passed over, as ssh skips keys it cannot use",
        arguments: [true, false])
    func identitySkipsUnusableKeys(ssh: Bool) throws {
        try withResolver(ssh: ssh) { dir, resolver in
            try sshKeygen(["-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", dir + "/.ssh/id_rsa"])
            try sshKeygen(["-q", "-t", "ecdsa", "-N", "", "-m", "PEM", "-f", dir + "/.ssh/pem"])
            try sshKeygen(["-q", "-t", "ed25519", "-N", "secret", "-f", dir + "/.ssh/ed"])
            try writeText(
                """
                Host both
                  IdentityFile ~/.ssh/missing
                  IdentityFile ~/.ssh/id_rsa
                  IdentityFile ~/.ssh/ed
                Host *
                  IdentityFile ~/.ssh/id_rsa
                  IdentityFile ~/.ssh/pem

                """, to: dir + "/.ssh/config")
            let both = try resolver.resolve("both")
            #expect(both.identityFile == dir + "/.ssh/ed", "an encrypted Ed25519 key is still an Ed25519 key")
            #expect(both.skippedIdentities == ["~/.ssh/missing (missing)", "~/.ssh/id_rsa (ssh-rsa)"])
            let other = try resolver.resolve("root@198.51.100.7")
            #expect(other.identityFile == nil)
            #expect(other.skippedIdentities == ["~/.ssh/id_rsa (ssh-rsa)", "~/.ssh/pem (a PEM key)"])
        }
    }

    @Test func parserReadsQuotesEqualsAndComments() {
        let file = SSHConfigFile(text: "Host \"my host\" x\n  IdentityFile \"/k with space\"  # mine\nHostName=h\n")
        let settings = file.settings(for: "x")
        #expect(settings.identityFiles == ["/k with space"])
        #expect(settings.values["hostname"] == "h", "HostName=h is inside the Host block that x matched")
        #expect(file.settings(for: "y").values.isEmpty)
        let match = SSHConfigFile(text: "Match host x\n  User u\nInclude other\n").settings(for: "x")
        #expect(match.values["user"] == nil)
        #expect(match.ignored == ["match", "include"])
    }
}

@Suite("OpenSSH known_hosts before trust on first use", .ownThreads)
struct OpenSSHKnownHostsTests {
    @Test("verified, differs, revoked, another key type only, negation, @cert-authority noted")
    func verdicts() throws {
        try withTemporaryDirectory { dir in
            let key = try newHostKey()
            let other = try newHostKey()
            let ecdsa = try sshKeygenHostKey(type: "ecdsa", in: dir)
            let user = dir + "/known_hosts"
            let global = dir + "/ssh_known_hosts"
            let hosts = OpenSSHKnownHosts(files: [user, dir + "/absent", global], home: dir)
            var notes: [String] = []

            try writeText(
                "\(knownHostsLine("a.example,[b.example]:2222", key))\n\(knownHostsLine("*.example,!c.example", other))\n",
                to: user)
            try writeText(
                "@cert-authority *.example \(ecdsa.type) \(Data(ecdsa.blob).base64EncodedString())\n"
                    + "@revoked d.example \(key.type) \(Data(key.blob).base64EncodedString())\n"
                    + knownHostsLine("e.test", ecdsa) + "\n", to: global)

            #expect(
                hosts.verdict(host: "A.example", port: 22, key: key, notes: &notes)
                    == .verified(.init(file: "~/known_hosts", line: 1)))
            #expect(
                hosts.verdict(host: "b.example", port: 2222, key: key, notes: &notes)
                    == .verified(.init(file: "~/known_hosts", line: 1)))
            #expect(
                hosts.verdict(host: "b.example", port: 22, key: key, notes: &notes)
                    == .differs(.init(file: "~/known_hosts", line: 2), known: other.fingerprint))
            #expect(hosts.verdict(host: "c.example", port: 22, key: key, notes: &notes) == .notFound)
            #expect(
                hosts.verdict(host: "d.example", port: 22, key: key, notes: &notes)
                    == .revoked(.init(file: "~/ssh_known_hosts", line: 2)))
            // Only an ECDSA key is known for e.test: not a changed key, but not a new host either;
            // ssh asks ("keys of different type are already known"), octunnel stops (issue 37).
            #expect(
                hosts.verdict(host: "e.test", port: 22, key: key, notes: &notes)
                    == .otherTypes([
                        .init(
                            place: .init(file: "~/ssh_known_hosts", line: 3), type: ecdsa.type,
                            fingerprint: ecdsa.fingerprint)
                    ]))
            #expect(hosts.knownKeyTypes(host: "e.test", port: 22) == [ecdsa.type])
            #expect(notes.contains { $0.contains("@cert-authority") && $0.contains("~/ssh_known_hosts:1") })
        }
    }

    @Test("a name hashed by the real ssh-keygen -H, [host]:port included, and HostKeyAlias")
    func hashedAndAlias() throws {
        try withTemporaryDirectory { dir in
            let key = try newHostKey()
            let path = dir + "/known_hosts"
            try writeText(
                knownHostsLine("[127.0.0.1]:2200", key) + "\n" + knownHostsLine("myalias", key) + "\n", to: path)
            try sshKeygen(["-H", "-f", path])
            #expect(try readText(path).hasPrefix("|1|"))
            var notes: [String] = []
            let hosts = OpenSSHKnownHosts(files: [path], home: "/nowhere")
            #expect(
                hosts.verdict(host: "127.0.0.1", port: 2200, key: key, notes: &notes)
                    == .verified(.init(file: path, line: 1)))
            #expect(hosts.verdict(host: "127.0.0.1", port: 22, key: key, notes: &notes) == .notFound)
            let aliased = OpenSSHKnownHosts(files: [path], home: "/nowhere", hostKeyAlias: "myalias")
            #expect(
                aliased.verdict(host: "127.0.0.1", port: 2200, key: key, notes: &notes)
                    == .verified(.init(file: path, line: 2)))
        }
    }
}
