import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A `TestAccount` to make and remove, or the test cancelled with `reason` where none can be
/// made: not root, or no useradd where sshd runs.
private func newAccount(else reason: Comment) throws -> TestAccount {
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: (SSHDServer.root ?? "") + "/usr/sbin/useradd")
    else {
        try Test.cancel(reason)
    }
    return TestAccount()
}

/// Issue 55, finding 5: no key option forbids `ssh -R /path:…`; `authorize --account NAME`
/// through a root login puts the key in a dedicated account whose sshd drop-in does. Against a
/// real sshd run as root whose configuration Includes a drop-in directory beside it (as Debian's
/// /etc/ssh/sshd_config Includes /etc/ssh/sshd_config.d/*.conf), accounts made by useradd.
@Suite(
    "keys for life: authorize --account closes Unix-socket forwards for the key's account", .ownThreads,
    .timeLimit(.minutes(4)))
struct AccountTests {
    @Test(
        "authorize --account: the account made, the drop-in checked and sshd reloaded; ssh -R /path with either key refused, sshd -t passes, the tunnel and home up work"
    )
    func accountClosesStreamLocal() async throws {
        let account = try newAccount(
            else: "authorize --account needs root and useradd where sshd runs (the test makes and removes an account)")
        defer { account.remove() }
        let (backend, fixture) = try KeyLifeFixture.withStandIn()
        try fixture.includeDropIns()
        let config = fixture.sshd.directory.file("sshd_config")
        let options = ["--account", account.name, "--sshd-config", config]
        let target = "\(account.name)@127.0.0.1:\(fixture.sshd.port)"

        let laptop = try fixture.run(["authorize", "vps", "--remote-port", String(backend.port)] + options)
        #expect(laptop.status == 0, "\(laptop)")
        for said in [
            "Created the account \(account.name)", "sshd was reloaded (SIGHUP",
            "Proven: key \(fixture.key.fingerprint) signs in as \(account.name)",
        ] {
            #expect(laptop.stderr.contains(said), "\(said): \(laptop)")
        }
        let dropIn = try String(
            contentsOfFile: fixture.sshd.directory.file("sshd_config.d/octunnel-\(account.name).conf"), encoding: .utf8)
        #expect(dropIn.contains("Match User \(account.name)\n    AllowStreamLocalForwarding no"), "\(dropIn)")
        let checked = try runInRoot("/usr/sbin/sshd", ["-t", "-f", config])
        #expect(checked.status == 0, "sshd -t: \(checked)")

        // The home's key, from a directory of its own, into the same account (the account is there now).
        let homeDirectory = try TempDirectory("octunnel-home-key")
        let homeKey = try KeyStore(directory: OctunnelDirectory(path: homeDirectory.path)).generate(
            comment: "home@test", rotate: false
        ).publicKey
        let remotePort = freePort()
        let home = try OCTunnelTestSupport.run(
            octunnelBinary,
            [
                "authorize", "vps", "--listen", "--remote-port", String(remotePort), "--home",
                homeDirectory.path,
            ] + options, environment: fixture.environment())
        #expect(home.status == 0 && home.stderr.contains("exists on vps; it was left as it was"), "\(home)")
        #expect(
            home.stderr.contains("already so, checked with sshd -t")
                && home.stderr.contains("sshd was reloaded (SIGHUP"), "\(home)")
        #expect(home.stderr.contains("Proven: key \(homeKey.fingerprint) signs in as \(account.name)"), "\(home)")

        for key in [fixture.keyPath, homeDirectory.file("id_ed25519")] {
            let socket = "/tmp/octunnel-planted-\(UInt32.random(in: 0...UInt32.max)).sock"
            defer { unlink(socket) }
            let planted = try OCTunnelTestSupport.run(
                "/usr/bin/ssh",
                [
                    "-F", "/dev/null", "-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                    "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                    "-o", "ExitOnForwardFailure=yes", "-R", "\(socket):127.0.0.1:9",
                    "-p", String(fixture.sshd.port), "\(account.name)@127.0.0.1", "octunnel-inspect",
                ])
            #expect(planted.status == 255 && planted.stderr.contains("forwarding failed"), "\(key): \(planted)")
            #expect(!FileManager.default.fileExists(atPath: socket), "\(key) planted \(socket)")
        }

        let tunnelChecked = try fixture.run([
            "tunnel", "check", target, "--remote-port", String(backend.port), "--connect-timeout", "10",
        ])
        #expect(
            tunnelChecked.status == 0
                && tunnelChecked.stderr.contains("\(account.name) with \(fixture.key.fingerprint)"), "\(tunnelChecked)")
        #expect(
            !tunnelChecked.stderr.contains("may still ask sshd"),
            "closed by the drop-in, yet named open: \(tunnelChecked)")
        let homeSide = try RunningProcess(
            octunnelBinary,
            [
                "home", "up", target, "--remote-port", String(remotePort), "--home-port", String(backend.port),
                "--no-health", "--connect-timeout", "10", "--home", homeDirectory.path,
            ],
            environment: fixture.environment())
        defer { homeSide.stopGracefullyOrKill() }
        #expect(
            try await offPool { homeSide.waitForLine(containing: " → home ", timeout: 20) } != nil,
            "\(homeSide.stderrText)")
    }

    @Test(
        "authorize --account through a login that is not root: 77, naming what is open and the lines an admin adds; nothing changed"
    )
    func notRoot() throws {
        let account = try newAccount(
            else: "needs root and useradd where sshd runs (the test makes and removes an account)")
        defer { account.remove() }
        let fixture = try KeyLifeFixture()
        try fixture.includeDropIns()
        // The user's login is a plain account, with the admin key.
        try account.create(authorizing: String(contentsOfFile: fixture.adminKeyPath + ".pub", encoding: .utf8))
        let config = fixture.sshd.directory.file("sshd_config")
        let result = try fixture.run([
            "authorize", "--account", "octunnel", "\(account.name)@vps", "--sshd-config", config,
        ])
        #expect(result.status == 77, "\(result)")
        #expect(
            result.stderr.contains("is not a root login")
                && result.stderr.contains("Match User octunnel / AllowStreamLocalForwarding no"), "\(result)")
        #expect(
            !FileManager.default.fileExists(atPath: fixture.sshd.directory.file("sshd_config.d/octunnel-octunnel.conf"))
        )
    }
}

/// `authorize --account` where sshd would not apply the drop-in, or refuses the configuration:
/// 73 with the reason, sshd's configuration and the accounts as they were.
@Suite(
    "keys for life: authorize --account leaves sshd as it was when the drop-in cannot apply", .ownThreads,
    .timeLimit(.minutes(3)))
struct AccountRefusedTests {
    /// A new account to authorize (removed after `body`) and a VPS; the test cancelled where no
    /// account can be made.
    private func withAccount(_ body: (TestAccount, KeyLifeFixture) throws -> Void) throws {
        let account = try newAccount(else: "authorize --account needs root and useradd where sshd runs")
        defer { account.remove() }
        try body(account, try KeyLifeFixture())
    }

    /// `authorize vps --account` with the sshd configuration at `config`: 73 saying each of
    /// `words`, and no account made.
    private func expectRefused(
        _ fixture: KeyLifeFixture, _ account: TestAccount, config: String, saying words: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try fixture.run(["authorize", "vps", "--account", account.name, "--sshd-config", config])
        #expect(result.status == 73, "\(result)", sourceLocation: sourceLocation)
        #expect(words.allSatisfy { result.stderr.contains($0) }, "\(result)", sourceLocation: sourceLocation)
        #expect(
            try runInRoot("/usr/bin/id", [account.name]).status != 0, "the account was made",
            sourceLocation: sourceLocation)
    }

    @Test(
        "sshd_config does not Include the drop-in directory: 73 naming the Include line; no drop-in left, no account made"
    )
    func notIncluded() throws {
        try withAccount { account, fixture in
            let config = fixture.sshd.directory.file("sshd_config")
            let before = try Data(contentsOf: URL(fileURLWithPath: config))
            try expectRefused(
                fixture, account, config: config,
                saying: ["settings not applied to \(account.name)", "Include \(config).d/*.conf"])
            #expect(
                !FileManager.default.fileExists(
                    atPath: fixture.sshd.directory.file("sshd_config.d/octunnel-\(account.name).conf")))
            #expect(try Data(contentsOf: URL(fileURLWithPath: config)) == before)
        }
    }

    @Test(
        "sshd -t refuses the configuration: 73 with sshd's words; the drop-in that was there before is back byte for byte"
    )
    func sshdRefuses() throws {
        try withAccount { account, fixture in
            // A configuration of its own (sshd -t reads it; the running sshd is not told), broken on its last line.
            let other = try TempDirectory("octunnel-broken-sshd")
            try FileManager.default.createDirectory(
                atPath: other.file("sshd_config.d"), withIntermediateDirectories: true)
            let old = "# an older drop-in, kept as it is\n"
            try other.write("sshd_config.d/octunnel-\(account.name).conf", old)
            let config = try String(contentsOfFile: fixture.sshd.directory.file("sshd_config"), encoding: .utf8)
            try other.write(
                "sshd_config", "Include \(other.file("sshd_config.d"))/*.conf\n" + config + "NoSuchKeywordHere yes\n")
            try expectRefused(
                fixture, account, config: other.file("sshd_config"),
                saying: ["`sshd -t` refused the configuration", "NoSuchKeywordHere"])
            #expect(
                try String(contentsOfFile: other.file("sshd_config.d/octunnel-\(account.name).conf"), encoding: .utf8)
                    == old)
        }
    }
}

/// A unique account on this machine (or in the Debian root sshd runs from), removed with its home.
struct TestAccount {
    let name = "octt" + String(UInt32.random(in: 0...UInt32.max), radix: 16)

    /// Makes the account (password `*`: none, yet not locked, which sshd without PAM would refuse)
    /// with `key` in its ~/.ssh/authorized_keys (sshd reads it as the account: the test's own file is root's only).
    func create(authorizing key: String) throws {
        let made = try runInRoot("/usr/sbin/useradd", ["-m", "-s", "/bin/sh", "-p", "*", name])
        #expect(made.status == 0, "\(made)")
        let script = "mkdir -p ~/.ssh && printf '%s\\n' \"$1\" > ~/.ssh/authorized_keys"
        let written = try runInRoot(
            "/bin/su", ["-s", "/bin/sh", name, "-c", script, "sh", key.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(written.status == 0, "\(written)")
    }

    func remove() {
        _ = try? runInRoot("/usr/sbin/userdel", ["-r", name])
    }
}

/// `path` run where sshd runs: this machine, or chrooted into `SSHDServer.root`.
func runInRoot(_ path: String, _ arguments: [String]) throws -> ProcessResult {
    guard let root = SSHDServer.root else { return try OCTunnelTestSupport.run(path, arguments) }
    return try OCTunnelTestSupport.run("/usr/sbin/chroot", [root, path] + arguments)
}

extension KeyLifeFixture {
    /// sshd restarted on its port with its configuration Including `sshd_config.d/*.conf` beside it
    /// (first, as Debian's does) and reading each account's own ~/.ssh/authorized_keys after the test's file.
    func includeDropIns() throws {
        let directory = sshd.directory.file("sshd_config.d")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        sshd.extraConfig =
            "Include \(directory)/*.conf\nAuthorizedKeysFile \(sshd.authorizedKeysPath) .ssh/authorized_keys\n"
            + sshd.extraConfig
        sshd.stop()
        try sshd.start()
    }
}
