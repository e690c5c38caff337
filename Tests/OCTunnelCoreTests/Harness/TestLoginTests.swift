import Foundation
import OCTunnelTestSupport
import Testing

/// The test sshd's logins run the account's shell on sshd's own environment, never this machine's
/// rc files (SSHDServer's `SetEnv SHLVL=1`): root's ~/.bashrc on a developer's machine may run
/// anything (here `pyenv init`: ~0.4 s a login, and 60 s each while its rehash lock is stale).
@Suite("test sshd: a login runs no rc file of this machine", .ownThreads)
struct TestLoginTests {
    @Test("a command through the test sshd sees no PATH entry under the account's home: bash sourced no ~/.bashrc")
    func loginReadsNoRCFile() throws {
        let keys = try TempDirectory("octunnel-login")
        try runTool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", keys.file("key")])
        let sshd = try SSHDServer(authorizedKeys: [try String(contentsOfFile: keys.file("key.pub"), encoding: .utf8)])
        defer { sshd.stop() }
        let login = try run(
            "/usr/bin/ssh",
            [
                "-i", keys.file("key"), "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=/dev/null",
                "-o", "StrictHostKeyChecking=no", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
                "-p", String(sshd.port), "\(NSUserName())@127.0.0.1", #"printf '%s\n' "$HOME" "$PATH""#,
            ],
            environment: ["PATH": "/usr/bin:/bin", "HOME": keys.path])
        try #require(login.status == 0, "\(login.stderr)")
        let lines = login.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(login.stdout)")
        let (home, path) = (lines[0], lines[1])
        let fromRCFiles = path.split(separator: ":").filter { $0.hasPrefix(home + "/") }
        #expect(fromRCFiles.isEmpty, "the login's PATH has \(fromRCFiles) under \(home): an rc file ran (\(path))")
    }
}
