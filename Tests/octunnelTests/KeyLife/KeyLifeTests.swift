import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `authorize`, `keys list` and `keys revoke` through the user's own ssh, against a real sshd.
@Suite("keys for life: authorize and keys through your own ssh login", .ownThreads, .timeLimit(.minutes(4)))
struct AuthorizeTests {
    @Test("authorize twice: one line, proven by its forward; every other line byte for byte")
    func authorizeTwice() throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile))
        let arguments = ["authorize", "vps", "--remote-port", String(backend.port)] + fixture.authorizeOptions
        let first = try fixture.run(arguments)
        #expect(first.status == 0, "\(first)")
        #expect(
            first.stderr.contains(
                "Proven: key \(fixture.key.fingerprint) signs in and its forward to 127.0.0.1:\(backend.port) opened"),
            "\(first)")
        let blob = fixture.key.line.split(separator: " ")[1]
        #expect(first.stdout.contains(blob) && first.stdout.contains("permitopen=\"127.0.0.1:\(backend.port)\""))
        let lines = try fixture.authorizedKeys()
        #expect(lines.filter { $0.contains(blob) }.count == 1)
        #expect(lines.filter { !$0.contains(blob) } == fixture.userLines)
        let after = try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile))
        #expect(after.starts(with: before), "the user's lines changed")

        let second = try fixture.run(arguments)
        #expect(second.status == 0, "\(second)")
        #expect(
            second.stderr.contains("already has a line for \(fixture.key.fingerprint); nothing was changed"),
            "\(second)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile)) == after)
    }

    @Test(
        "authorize -L after authorize: the key's line is there but not for that forward: 77, naming keys revoke; revoked and authorized again, proven for both"
    )
    func anotherForwardLater() throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn()
        #expect(
            try fixture.authorize(remotePort: backend.port)
                .status == 0)
        let app = freePort()
        let more =
            ["authorize", "vps", "--remote-port", String(backend.port), "-L", "3000:127.0.0.1:\(app)"]
            + fixture.authorizeOptions
        let refused = try fixture.run(more)
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.stderr.contains("octunnel keys revoke \(fixture.key.fingerprint) vps"), "\(refused)")
        #expect(try fixture.run(["keys", "revoke", fixture.key.fingerprint, "vps"] + fixture.fileOptions).status == 0)
        let again = try fixture.run(more)
        #expect(again.status == 0, "\(again)")
        #expect(
            again.stderr.contains(
                "its forward to 127.0.0.1:\(backend.port) opened; its forward to 127.0.0.1:\(app) is allowed"),
            "\(again)")
    }

    @Test("authorize --listen: the home's line, proven by a listen the VPS grants")
    func authorizeHome() throws {
        let fixture = try KeyLifeFixture()
        let port = freePort()
        let result = try fixture.run(
            ["authorize", "vps", "--listen", "--remote-port", String(port)] + fixture.authorizeOptions)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("its listen on 127.0.0.1:\(port) was granted"), "\(result)")
        #expect(result.stdout.contains("permitlisten=\"127.0.0.1:\(port)\""))
    }

    @Test("~/.ssh 0777 before authorize: fixed, or named with the fix")
    func openSSHDirectory() throws {
        // sshd reads a file under a home of the test's own, so the directory is the one the program meets.
        let vpsHome = try TempDirectory("octunnel-vpshome")
        let file = vpsHome.file(".ssh/authorized_keys")
        try FileManager.default.createDirectory(atPath: vpsHome.file(".ssh"), withIntermediateDirectories: true)
        chmod(vpsHome.file(".ssh"), 0o777)
        let fixture = try KeyLifeFixture(authorizedKeysFile: file)
        let backend = try OpenCodeStandIn()
        let result = try fixture.authorize(remotePort: backend.port)
        let mode = try #require(
            try FileManager.default.attributesOfItem(atPath: vpsHome.file(".ssh"))[.posixPermissions] as? Int)
        // Fixed (not named): the program makes ~/.ssh writable by the user only, as sshd's StrictModes wants, and says so.
        #expect(result.status == 0, "\(result)")
        #expect(mode & 0o022 == 0, "left open: \(String(mode, radix: 8)) \(result)")
        #expect(result.stderr.contains("writable by you only"), "\(result)")
        #expect(result.stderr.contains("Proven"), "\(result)")
    }

    @Test(
        "authorized_keys that belongs to another user, or that sshd does not read: left as it was, named with the fix (73)"
    )
    func refusedWithTheFix() throws {
        let fixture = try KeyLifeFixture()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile))
        // sshd's configuration names another file than --file.
        let elsewhere = try fixture.run([
            "authorize", "vps", "--file", ".ssh/authorized_keys", "--sshd-config",
            fixture.sshd.directory.file("sshd_config"),
        ])
        #expect(elsewhere.status == 73, "\(elsewhere)")
        #expect(elsewhere.stderr.contains("run again with --file \(fixture.keysFile)"), "\(elsewhere)")
        // The file is someone else's (sshd reads it as that user's: octunnel will not write it).
        chown(fixture.keysFile, 65534, 65534)
        let owner = try fixture.run(["authorize", "vps"] + fixture.authorizeOptions)
        chown(fixture.keysFile, 0, 0)
        #expect(owner.status == 73, "\(owner)")
        #expect(
            owner.stderr.contains("belongs to another user")
                && owner.stderr.contains("sudo chown $USER: \(fixture.keysFile)"), "\(owner)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile)) == before)
    }

    @Test("keys list shows the line; keys revoke removes it and leaves the file as it was before authorize")
    func listAndRevoke() throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile))
        let file = fixture.fileOptions
        #expect(
            try fixture.authorize(remotePort: backend.port)
                .status == 0)
        let listed = try fixture.run(["keys", "list", "vps"] + file)
        #expect(listed.status == 0, "\(listed)")
        let rows = listed.stdout.split(separator: "\n")
        #expect(
            rows.count == 1 && rows[0].contains(fixture.key.fingerprint) && rows[0].contains("laptop@test")
                && rows[0].contains("127.0.0.1:\(backend.port)"), "\(listed)")
        let revoked = try fixture.run(["keys", "revoke", fixture.key.fingerprint, "vps"] + file)
        #expect(revoked.status == 0, "\(revoked)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile)) == before)
        #expect(try fixture.run(["keys", "list", "vps"] + file).stdout.isEmpty)
        let again = try fixture.run(["keys", "revoke", fixture.key.fingerprint, "vps"] + file)
        #expect(again.status == 0 && again.stderr.contains("nothing was changed"), "\(again)")
    }

    @Test("bad input: a target like an option, a --file with a quote, a malformed fingerprint: one line, exit 64")
    func badInput() throws {
        let fixture = try KeyLifeFixture()
        for arguments in [
            ["authorize", "-oProxyCommand=x"], ["authorize", "vps", "--file", "a\"b"],
            ["keys", "revoke", "SHA256:nope", "vps"],
            ["keygen", "--install"], ["keygen", "vps"],
        ] {
            let result = try fixture.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result)")
        }
        // The user's ssh cannot log in: 69, in ssh's words.
        let denied = try fixture.run(["keys", "list", "root@127.0.0.1:\(fixture.sshd.port)"])
        #expect(denied.status == 69 && denied.stderr.contains("could not log in to the VPS with your ssh"), "\(denied)")
    }
}

/// `keygen --rotate --install`: the key replaces itself through its own line, against a real sshd.
@Suite("keys for life: rotation in place, by the key itself", .ownThreads, .timeLimit(.minutes(5)))
struct KeyRotationTests {
    /// After a finished rotation: the old key refused, the new one working, one octunnel line
    /// (the new key's), the user's lines as they were, no pending state left.
    private func expectRotated(
        _ fixture: KeyLifeFixture, old: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let new = try fixture.blob(ofKeyAt: fixture.keyPath)
        #expect(new != old, sourceLocation: sourceLocation)
        #expect(
            try !fixture.signsIn(fixture.previousKeyPath), "the old key still signs in", sourceLocation: sourceLocation)
        #expect(try fixture.signsIn(fixture.keyPath), "the new key does not sign in", sourceLocation: sourceLocation)
        let lines = try fixture.authorizedKeys()
        #expect(lines.filter { $0.contains(new) }.count == 1, "\(lines)", sourceLocation: sourceLocation)
        #expect(!lines.contains { $0.contains(old) }, "\(lines)", sourceLocation: sourceLocation)
        // The old line's place holds its tombstone (a comment sshd skips; keys revoke follows it).
        #expect(
            lines.filter { !$0.contains(new) && !$0.hasPrefix("#octunnel-retired K=") } == fixture.userLines,
            sourceLocation: sourceLocation)
        #expect(
            !FileManager.default.fileExists(atPath: fixture.octunnel.file("id_ed25519.next")),
            sourceLocation: sourceLocation)
        #expect(
            !FileManager.default.fileExists(atPath: fixture.octunnel.file("id_ed25519.rotation")),
            sourceLocation: sourceLocation)
    }

    /// Lets `loop` have five more requests served (hang guard 20 s), stops it and expects none of
    /// its requests to have failed; how many were served.
    private func stopAfterFiveMore(
        _ loop: RequestLoop, up: RunningProcess, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Int {
        let served = loop.succeeded
        _ = try await offPool { waitUntil(timeout: 20) { loop.succeeded >= served + 5 } }
        let (ok, failures) = loop.stop()
        #expect(
            failures.isEmpty,
            "\(failures.count) of \(ok + failures.count) requests failed: \(failures.prefix(3))\n\(up.stderrText)",
            sourceLocation: sourceLocation)
        return ok
    }

    /// `ROLE reconnect` by hand: it answers 0, and `up` (that role's running process) says a sign-in
    /// with the key octunnel's directory holds now after the request (not an earlier one's line).
    private func expectReconnectWithNewKey(
        _ fixture: KeyLifeFixture, role: String, up: RunningProcess, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let key = try KeyStore(directory: OctunnelDirectory(path: fixture.octunnel.path)).publicKey().fingerprint
        let before = up.stderr.count
        let reconnect = try await offPool { try fixture.run([role, "reconnect", "--wait", "20"]) }
        #expect(reconnect.status == 0, "\(reconnect)\n\(up.stderrText)", sourceLocation: sourceLocation)
        let signedIn = try await offPool {
            up.waitForLine(containing: "authenticated as root with \(key)", after: before, timeout: 20)
        }
        #expect(
            signedIn != nil, "no sign-in with \(key) after the reconnect: \(up.stderrText)",
            sourceLocation: sourceLocation)
    }

    @Test(
        "the laptop's key rotates while tunnel up serves requests: none fails; reconnected, the tunnel signs in with the new key and serves"
    )
    func laptopRotatesServing() async throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn(laptopLine: true)
        let old = try fixture.blob(ofKeyAt: fixture.keyPath)
        let tunnel = try fixture.start([
            "tunnel", "up", fixture.target, "--local-port", "0", "--remote-port", String(backend.port),
            "--no-health", "--connect-timeout", "10", "--verbose",
        ])
        defer { tunnel.stopGracefullyOrKill() }
        let port = try #require(try await offPool { tunnel.forwardedPort() }, "\(tunnel.stderrText)")
        let loop = RequestLoop(port: port)
        _ = try await offPool { waitUntil(timeout: 20) { loop.succeeded >= 3 } }
        let rotated = try await offPool {
            try fixture.run(["keygen", "--rotate", "--install", fixture.target, "--remote-port", String(backend.port)])
        }
        #expect(rotated.status == 0, "\(rotated)")
        #expect(rotated.stdout.contains(try fixture.blob(ofKeyAt: fixture.keyPath)))
        for step in [
            "added the new key's line beside the old one",
            "The new key signs in: its forward to 127.0.0.1:\(backend.port) opened",
            "is the new key; the old one is", "The VPS removed the old key's line", "is refused now",
        ] {
            #expect(rotated.stderr.contains(step), "\(step): \(rotated)")
        }
        #expect(
            rotated.stderr.contains("Asked the running tunnel up (pid \(tunnel.pid)) to sign in with the new key"),
            "\(rotated)")
        let newKey = try KeyStore(directory: OctunnelDirectory(path: fixture.octunnel.path)).publicKey().fingerprint
        #expect(
            try await offPool { tunnel.waitForLine(containing: "authenticated as root with \(newKey)", timeout: 20) }
                != nil,
            "the rotation's reconnect: \(tunnel.stderrText)")
        #expect(try await stopAfterFiveMore(loop, up: tunnel) >= 8)
        // A reconnect by hand as well: the new key again (the old session drains, nothing is cut).
        try await expectReconnectWithNewKey(fixture, role: "tunnel", up: tunnel)
        // With the new key: served, none failed.
        #expect(try await stopAfterFiveMore(RequestLoop(port: port), up: tunnel) >= 5)
        #expect(tunnel.isRunning)
        try expectRotated(fixture, old: old)
    }

    @Test(
        "the home's key rotates (target, port and role from home up's saved settings) while home up holds the VPS port and the laptop's requests come through it: none fails"
    )
    func homeRotatesServing() async throws {
        let backend = try OpenCodeStandIn()
        let remotePort = freePort()
        let fixture = try KeyLifeFixture(octunnelLine: homeLine(port: remotePort))
        let old = try fixture.blob(ofKeyAt: fixture.keyPath)
        // Saved: the rotation below takes its target, port and role (home) from these settings alone.
        let homeSide = try fixture.start([
            "home", "up", fixture.target, "--remote-port", String(remotePort), "--home-port", String(backend.port),
            "--no-health", "--connect-timeout", "10", "--verbose", "--save",
        ])
        defer { homeSide.stopGracefullyOrKill() }
        try #require(try await offPool { homeSide.homeListening() } != nil, "\(homeSide.stderrText)")
        // The laptop signs in with the user's admin key, from a directory of its own.
        let laptopHome = try TempDirectory("octunnel-laptop")
        let laptop = try RunningProcess(
            octunnelBinary,
            [
                "tunnel", "up", "--home", laptopHome.path, fixture.target, "--identity", fixture.adminKeyPath,
                "--local-port", "0", "--remote-port", String(remotePort), "--no-health", "--connect-timeout", "10",
            ],
            environment: fixture.environment())
        defer { laptop.stopGracefullyOrKill() }
        let port = try #require(try await offPool { laptop.forwardedPort() }, "\(laptop.stderrText)")
        let loop = RequestLoop(port: port)
        _ = try await offPool { waitUntil(timeout: 20) { loop.succeeded >= 3 } }
        let rotated = try await offPool { try fixture.run(["keygen", "--rotate", "--install"]) }
        #expect(rotated.status == 0, "\(rotated)")
        #expect(
            rotated.stderr.contains("127.0.0.1:\(remotePort) is held")
                && rotated.stderr.contains("the key's line answered for it"),
            "the port home up holds was proved through the line: \(rotated)")
        _ = try await stopAfterFiveMore(loop, up: homeSide)
        #expect(homeSide.isRunning && laptop.isRunning)
        try expectRotated(fixture, old: old)
        // At its next session home up signs in with the new key and listens again (a home
        // reconnect cannot overlap: the old session holds the port, so requests wait meanwhile).
        try await expectReconnectWithNewKey(fixture, role: "home", up: homeSide)
        #expect(
            try await offPool {
                waitUntil(timeout: 20) { (httpGet(port: port, path: "/global/health") ?? "").hasPrefix("HTTP/1.") }
            },
            "not served through the home's new session: \(homeSide.stderrText)")
    }

    @Test(
        "a line from before rotation (command=\"/bin/false\"): refused with 77 naming authorize, nothing left pending, nothing changed"
    )
    func olderLineCannotRotate() throws {
        let backend = try OpenCodeStandIn()
        let fixture = try KeyLifeFixture(octunnelLine: { key, _ in
            "restrict,port-forwarding,permitopen=\"127.0.0.1:\(backend.port)\",permitlisten=\"127.0.0.1:1\",command=\"/bin/false\" \(key.line)"
        })
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile))
        let key = try Data(contentsOf: URL(fileURLWithPath: fixture.keyPath))
        let result = try fixture.run([
            "keygen", "--rotate", "--install", fixture.target, "--remote-port", String(backend.port),
        ])
        #expect(result.status == 77, "\(result)")
        #expect(result.stderr.contains("octunnel authorize \(fixture.target)"), "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile)) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.keyPath)) == key)
        for leftover in ["id_ed25519.next", "id_ed25519.next.pub", "id_ed25519.rotation", "id_ed25519.prev"] {
            #expect(!FileManager.default.fileExists(atPath: fixture.octunnel.file(leftover)), "\(leftover)")
        }
    }

    @Test(
        "a tunnel that signs in with another key (the ssh config's IdentityFile, --agent saved) is not rotated: 64, naming that key"
    )
    func anotherKeyIsNotRotated() throws {
        let fixture = try KeyLifeFixture()
        // `vps` of the user's ssh config names the admin key: tunnel up would sign in with it.
        let result = try fixture.run(["keygen", "--rotate", "--install", "vps"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("with \(fixture.adminKeyPath) (the ssh config's IdentityFile)"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: fixture.octunnel.file("id_ed25519.next")))
    }

    @Test("--if-older-than DAYS (what the service runs daily): a younger key is left alone, nothing asked of the VPS")
    func notDueYet() throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn(laptopLine: true)
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile))
        let key = try Data(contentsOf: URL(fileURLWithPath: fixture.keyPath))
        let result = try fixture.run([
            "keygen", "--rotate", "--install", fixture.target, "--remote-port", String(backend.port), "--if-older-than",
            "30",
        ])
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("The key is 0 day(s) old: not rotated before it is 30 days old."), "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.keyPath)) == key)
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.keysFile)) == before)
        #expect(!FileManager.default.fileExists(atPath: fixture.octunnel.file("id_ed25519.next")))
        #expect(!fixture.sshd.log.contains("Accepted publickey"), "the VPS was asked")
    }

    @Test(
        "a rotation stopped right after each step leaves a key that signs in, and a second run finishes it",
        arguments: 1...5)
    func stoppedAfterStep(_ step: Int) async throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn(laptopLine: true)
        let old = try fixture.blob(ofKeyAt: fixture.keyPath)
        let arguments = ["keygen", "--rotate", "--install", fixture.target, "--remote-port", String(backend.port)]
        let stopped = try await offPool {
            try fixture.run(arguments, environment: ["OCTUNNEL_FAULT": "rotation-stop-after-\(step)"])
        }
        #expect(stopped.status == 137, "\(stopped)")
        // What `tunnel up` signs in with at its next connect still works.
        #expect(try fixture.signsIn(fixture.keyPath), "after step \(step) the current key is refused")
        #expect(FileManager.default.fileExists(atPath: fixture.octunnel.file("id_ed25519.rotation")))
        // A plain rotation would strand the pending key: refused.
        let plain = try fixture.run(["keygen", "--rotate"])
        #expect(plain.status == 73 && plain.stderr.contains("half done"), "\(plain)")
        let finished = try await offPool { try fixture.run(Array(arguments.prefix(3))) }
        #expect(finished.status == 0, "\(finished)")
        #expect(finished.stderr.contains("Finishing the rotation"), "\(finished)")
        try expectRotated(fixture, old: old)
    }
}
