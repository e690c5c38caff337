import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The rotation verbs as sshd runs them: the line's command dequoted by sshd's option parser,
/// run by the account's login shell, with sshd's SSH_ORIGINAL_COMMAND, through OpenSSH's ssh.
@Suite("rotating a key through a real sshd", .ownThreads)
struct KeyRotationSSHDTests {
    /// `ssh -i KEY` to the test's sshd, running `command`.
    static func ssh(_ sshd: SSHDServer, key: String, _ command: String) throws -> ProcessResult {
        try run(
            "/usr/bin/ssh",
            [
                "-i", key, "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=/dev/null", "-o",
                "StrictHostKeyChecking=no",
                "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-p", String(sshd.port), "root@127.0.0.1", command,
            ],
            environment: ["PATH": "/usr/bin:/bin", "HOME": sshd.directory.path])
    }

    @Test(
        "the old key adds the new one and retires itself; the new key logs in to its line's program; the old one is refused from then on",
        arguments: [Role.tunnel, .home])
    func rotate(role: Role) throws {
        let keys = try TempDirectory("octunnel-rotate")
        for name in ["old", "new"] {
            try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "me@\(name)", "-f", keys.file(name)])
        }
        let old = try #require(
            SSHPublicKey.parse(line: try readText(keys.file("old.pub")).trimmingCharacters(in: .whitespacesAndNewlines))
        )
        let new = try #require(
            SSHPublicKey.parse(line: try readText(keys.file("new.pub")).trimmingCharacters(in: .whitespacesAndNewlines))
        )
        let port = freePort()
        let sshd = try SSHDServer(authorizedKeys: [])
        defer { sshd.stop() }
        // The test's sshd reads an authorized_keys of its own (AuthorizedKeysFile, absolute): the line names it.
        let ends = [HostPort(host: "127.0.0.1", port: port)]
        let oldLine =
            role == .tunnel
            ? restrictedAuthorizedKeysLine(old, targets: ends, file: sshd.authorizedKeysPath)
            : listenAuthorizedKeysLine(old, listens: ends, file: sshd.authorizedKeysPath)
        let mine = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBSc/yJtN5yOjf4GFjCUkIaFw+XUX3bQQK/e3QbOx9wF admin\n"
        try writeText(mine + oldLine + "\n", to: sshd.authorizedKeysPath)
        let added = try Self.ssh(sshd, key: keys.file("old"), KeyRotationVerb.addCommand(for: new))
        #expect(
            AuthorizedKeysReport.parse(added.stdout)?.result == .added && added.status == 0,
            "\(added)\n\(sshd.log.suffix(2000))")
        // The new key logs in, and sshd runs its line's program: a plain command is refused (or, for the home, reclaimed).
        let newLogin = try Self.ssh(
            sshd, key: keys.file("new"), role == .tunnel ? "echo RAN" : PortReclaimProgram.inspectVerb)
        if role == .tunnel {
            #expect(
                newLogin.stdout == "octunnel-keys v=1 result=refused reason=verb\n" && newLogin.status == 1,
                "\(newLogin)")
        } else {
            #expect(newLogin.stdout == "octunnel-reclaim v=1 result=free port=127.0.0.1:\(port)\n", "\(newLogin)")
        }
        let retired = try Self.ssh(sshd, key: keys.file("old"), KeyRotationVerb.retire)
        #expect(AuthorizedKeysReport.parse(retired.stdout)?.result == .retired, "\(retired)")
        let successor = OctunnelKeyLine(
            role: role, ends: ends, key: SSHPublicKey(type: new.type, blob: new.blob, comment: old.comment),
            predecessor: OctunnelKeyLine.tag(for: old), file: sshd.authorizedKeysPath
        ).line
        #expect(
            try readText(sshd.authorizedKeysPath) == mine
                + "#octunnel-retired K=\(OctunnelKeyLine.tag(for: old)) P= A=\(OctunnelKeyLine.today())\n"
                + successor + "\n")
        let gone = try Self.ssh(sshd, key: keys.file("old"), KeyRotationVerb.retire)
        #expect(gone.status == 255 && AuthorizedKeysReport.parse(gone.stdout) == nil, "\(gone)")
    }

    @Test(
        "install, list and revoke through the user's own login (/bin/sh -s, the script on stdin), against the test sshd's own configuration"
    )
    func installListRevoke() throws {
        let keys = try TempDirectory("octunnel-install")
        for name in ["admin", "laptop"] {
            try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", keys.file(name)])
        }
        let admin = try readText(keys.file("admin.pub")).trimmingCharacters(in: .whitespacesAndNewlines)
        let laptop = try #require(
            SSHPublicKey.parse(
                line: try readText(keys.file("laptop.pub")).trimmingCharacters(in: .whitespacesAndNewlines)))
        let sshd = try SSHDServer(authorizedKeys: [admin])
        defer { sshd.stop() }
        let login = { (script: String) throws -> ProcessResult in
            try run(
                "/usr/bin/ssh",
                [
                    "-i", keys.file("admin"), "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=/dev/null", "-o",
                    "StrictHostKeyChecking=no",
                    "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-p", String(sshd.port), "root@127.0.0.1", "/bin/sh",
                    "-s",
                ],
                stdin: script, environment: ["PATH": "/usr/bin:/bin", "HOME": sshd.directory.path])
        }
        let line = restrictedAuthorizedKeysLine(
            laptop, targets: [HostPort(host: "127.0.0.1", port: freePort())], file: sshd.authorizedKeysPath)
        // The test sshd's AuthorizedKeysFile is its absolute path: install reads it from the sshd_config sshd runs with.
        let install = AuthorizedKeysScript.install(
            line: line, file: sshd.authorizedKeysPath, sshdConfig: sshd.directory.file("sshd_config"))
        let added = try login(install)
        #expect(added.stdout == "octunnel-keys v=1 result=added\n", "\(added)")
        #expect(try readText(sshd.authorizedKeysPath) == admin + "\n" + line + "\n")
        let refused = try Self.ssh(sshd, key: keys.file("laptop"), "echo RAN")
        #expect(refused.stdout == "octunnel-keys v=1 result=refused reason=verb\n", "\(refused)")
        #expect(try login(install).stdout == "octunnel-keys v=1 result=present\n")
        // Elsewhere: the default file, which this sshd does not read.
        let elsewhere = try login(
            AuthorizedKeysScript.install(
                line: restrictedAuthorizedKeysLine(laptop, remotePort: 18080), file: OctunnelKeyLine.defaultFile,
                sshdConfig: sshd.directory.file("sshd_config")))
        #expect(
            elsewhere.stdout == "octunnel-keys v=1 result=refused reason=elsewhere files=\(sshd.authorizedKeysPath)\n",
            "\(elsewhere)")
        let listed = AuthorizedKeysScript.listedLines(
            in: try login(AuthorizedKeysScript.list(file: sshd.authorizedKeysPath)).stdout)
        #expect(listed.map(\.tag) == [OctunnelKeyLine.tag(for: laptop)])
        let revoked = try login(
            AuthorizedKeysScript.revoke(
                tag: OctunnelKeyLine.tag(for: laptop), keyBlob: Data(laptop.blob).base64EncodedString(),
                file: sshd.authorizedKeysPath))
        #expect(
            revoked.stdout == "octunnel-keys-removed \(line)\noctunnel-keys v=1 result=revoked removed=1 left=0\n",
            "\(revoked)")
        #expect(try readText(sshd.authorizedKeysPath) == admin + "\n")
        #expect(try Self.ssh(sshd, key: keys.file("laptop"), "echo RAN").status == 255)
    }
}
