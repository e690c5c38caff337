import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 55, tried as the holder of one stolen restricted key would, against a real sshd: the
/// owner gets rid of the thief with `keys revoke`, a rotation cannot be hijacked, the stolen key
/// cannot adopt a key that already signs in, and nothing it can plant holds the lock.
@Suite("a stolen restricted key against the owner's own tools", .ownThreads, .timeLimit(.minutes(8)))
struct StolenKeyTests {
    @Test(
        "keys revoke of a stolen key whose thief added 3 successors in a chain (each predecessor retired but the last): every line of the lineage goes, each named; 0 of the thief's keys sign in; keys list showed the lineage"
    )
    func revokeChain() throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn(laptopLine: true)
        let stolen = try fixture.stealKey()
        let thieves = try (1...3).map { try fixture.newKey("thief\($0)") }
        var holder = stolen
        for (index, thief) in thieves.enumerated() {
            let added = try fixture.ssh(holder, KeyRotationVerb.addCommand(for: thief.key))
            #expect(added.stdout == "octunnel-keys v=1 result=added\n", "\(added)")
            if index < 2 {
                let retired = try fixture.ssh(holder, KeyRotationVerb.retire)
                #expect(retired.stdout.hasPrefix("octunnel-keys v=1 result=retired"), "\(retired)")
            }
            holder = thief.path
        }
        let listed = try fixture.run(["keys", "list", "vps"] + fixture.fileOptions)
        let rows = listed.stdout.split(separator: "\n").map(String.init)
        #expect(listed.status == 0 && rows.count == 2, "\(listed)")
        #expect(rows.last?.contains("PENDING successor of \(thieves[1].key.fingerprint)") == true, "\(listed)")
        #expect(rows.first?.contains("from \(OctunnelKeyLine.tag(for: thieves[0].key))") == true, "\(listed)")
        let revoked = try fixture.run(["keys", "revoke", fixture.key.fingerprint, "vps"] + fixture.fileOptions)
        #expect(revoked.status == 0, "\(revoked)")
        for thief in thieves.dropFirst() {
            #expect(
                revoked.stderr.contains("Removed laptop 127.0.0.1:\(backend.port) \(thief.key.fingerprint)"),
                "\(revoked)")
        }
        let signingIn = try ([stolen] + thieves.map(\.path)).filter { try fixture.signsIn($0) }
        #expect(signingIn.isEmpty, "still signing in: \(signingIn)")
        #expect(try fixture.authorizedKeys() == fixture.userLines)
    }

    @Test(
        "a thief's add between the owner's proof (step 3) and the retire: refused (held), the owner's successor stays, the rotation finishes with the owner's key only"
    )
    func addDuringRotation() async throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn(laptopLine: true)
        let stolen = try fixture.stealKey()
        let thief = try fixture.newKey("thief")
        let arguments = ["keygen", "--rotate", "--install", fixture.target, "--remote-port", String(backend.port)]
        let stopped = try await offPool {
            try fixture.run(arguments, environment: ["OCTUNNEL_FAULT": "rotation-stop-after-3"])
        }
        #expect(stopped.status == 137, "\(stopped)")
        let before = try fixture.authorizedKeys()
        let held = try fixture.ssh(stolen, KeyRotationVerb.addCommand(for: thief.key))
        #expect(held.stdout == "octunnel-keys v=1 result=refused reason=held\n" && held.status == 1, "\(held)")
        #expect(try fixture.authorizedKeys() == before)
        let finished = try await offPool { try fixture.run(Array(arguments.prefix(3))) }
        #expect(finished.status == 0, "\(finished)")
        let (thiefIn, stolenIn, ownerIn) = (
            try fixture.signsIn(thief.path), try fixture.signsIn(stolen), try fixture.signsIn(fixture.keyPath)
        )
        #expect(!thiefIn && !stolenIn && ownerIn)
    }

    @Test(
        "a thief's add landing first stops the owner's rotation: not \"Rotated\", someone else holds this key, 77, the new pair discarded"
    )
    func thiefFirst() throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn(laptopLine: true)
        let thief = try fixture.newKey("thief")
        let added = try fixture.ssh(try fixture.stealKey(), KeyRotationVerb.addCommand(for: thief.key))
        #expect(added.stdout == "octunnel-keys v=1 result=added\n", "\(added)")
        let result = try fixture.run([
            "keygen", "--rotate", "--install", fixture.target, "--remote-port", String(backend.port),
        ])
        #expect(
            result.status == 77 && result.stderr.contains("someone else holds this key: revoke it from your own login"),
            "\(result)")
        #expect(result.stderr.contains("octunnel keys revoke \(fixture.key.fingerprint)"), "\(result)")
        for leftover in ["id_ed25519.next", "id_ed25519.rotation"] {
            #expect(!FileManager.default.fileExists(atPath: fixture.octunnel.file(leftover)), "\(leftover)")
        }
    }

    /// Each run is a case of its own, so that Swift Testing runs them side by side: in a row they
    /// were 69 s, the Debian 13 leg's longest test and most of its time.
    @Test(
        "the thief's race against a rotation, 20 runs, its add tried again and again from a moment that moves along the rotation: 0 runs end with exit 0 and the thief's key signing in",
        arguments: 0..<20
    )
    func race20(run: Int) async throws {
        let backend = try OpenCodeStandIn()
        let fixture = try KeyLifeFixture(octunnelLine: laptopLine(port: backend.port))
        let stolen = try fixture.stealKey()
        let thief = try fixture.newKey("thief")
        let done = Flag()
        // The thief starts a little later each run (not a synchronisation: the moment the
        // race is run at), then adds until one lands or the rotation is over.
        let racer = Thread { [fixture] in
            Thread.sleep(forTimeInterval: Double(run % 10) * 0.15)
            while !done.isSet {
                guard let answer = try? fixture.ssh(stolen, KeyRotationVerb.addCommand(for: thief.key)) else {
                    break
                }
                if answer.stdout.hasPrefix("octunnel-keys v=1 result=added") || answer.status == 255 { break }
            }
            done.finish()
        }
        racer.start()
        let result = try await offPool {
            try fixture.run([
                "keygen", "--rotate", "--install", fixture.target, "--remote-port", String(backend.port),
            ])
        }
        done.set()
        done.waitFinished()
        let thiefIn = try fixture.signsIn(thief.path)
        #expect(!(result.status == 0 && thiefIn), "run \(run): rotated with the thief's key signing in: \(result)")
        if result.status == 0 {
            let ownerIn = try fixture.signsIn(fixture.keyPath)
            #expect(ownerIn, "run \(run): the owner's new key is refused")
        } else {
            #expect(
                result.status == 77 && result.stderr.contains("someone else holds this key"),
                "run \(run): \(result)")
        }
        print("race run \(run): exit \(result.status), thief \(thiefIn ? "in" : "out")")
    }

    @Test(
        "the owner's shell key in authorized_keys2 (sshd reads both): the stolen key cannot make it its successor (held, as for any refusal of that kind); the owner's login still runs commands"
    )
    func noAdoption() throws {
        let backend = try OpenCodeStandIn()
        let directory = try TempDirectory("octunnel-two-files")
        let first = directory.file("authorized_keys"), second = directory.file("authorized_keys2")
        let fixture = try KeyLifeFixture(
            octunnelLine: laptopLine(port: backend.port), authorizedKeysFile: first, alsoReads: [second])
        // The shell key's line lives in the second file only.
        let lines = try fixture.authorizedKeys()
        try writeBytes(Array((lines.dropFirst().joined(separator: "\n") + "\n").utf8), to: first)
        try writeBytes(Array((lines[0] + "\n").utf8), to: second)
        let before = try fixture.authorizedKeys()
        let shellKey = try #require(SSHPublicKey.parse(line: lines[0]))
        let stolen = try fixture.stealKey()
        let refused = try fixture.ssh(stolen, KeyRotationVerb.addCommand(for: shellKey))
        #expect(refused.stdout == "octunnel-keys v=1 result=refused reason=held\n" && refused.status == 1, "\(refused)")
        let retire = try fixture.ssh(stolen, KeyRotationVerb.retire)
        #expect(retire.stdout == "octunnel-keys v=1 result=refused reason=successor\n", "\(retire)")
        #expect(try fixture.authorizedKeys() == before)
        let login = try fixture.ssh(fixture.adminKeyPath, "echo RAN")
        #expect(login.stdout == "RAN\n", "\(login)")
    }

    @Test(
        "ssh -R <authorized_keys>.octunnel-lock:… with the stolen key leaves a Unix socket at the lock: keys revoke and the key's own verbs still edit, at once"
    )
    func socketAtTheLock() throws {
        // Nothing here opens the line's forward: its stand-in may go at once.
        let fixture = try KeyLifeFixture.withStandIn(laptopLine: true).fixture
        let stolen = try fixture.stealKey()
        let lock = fixture.keysFile + ".octunnel-lock"
        let planter = try RunningProcess(
            "/usr/bin/ssh",
            [
                "-F", "/dev/null", "-i", stolen, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                "-o", "ExitOnForwardFailure=yes", "-N", "-R", "\(lock):127.0.0.1:9",
                "-p", String(fixture.sshd.port), "root@127.0.0.1",
            ])
        defer { planter.stopGracefullyOrKill() }
        let deadline = Date().addingTimeInterval(30)
        while (try? FileManager.default.attributesOfItem(atPath: lock)[.type] as? FileAttributeType) != .typeSocket,
            Date() < deadline
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(
            (try? FileManager.default.attributesOfItem(atPath: lock)[.type] as? FileAttributeType) == .typeSocket,
            "no socket planted: \(planter.stderrText)")
        let thief = try fixture.newKey("thief")
        let started = Date()
        let added = try fixture.ssh(stolen, KeyRotationVerb.addCommand(for: thief.key))
        #expect(added.stdout == "octunnel-keys v=1 result=added\n", "\(added)")
        let revoked = try fixture.run(["keys", "revoke", fixture.key.fingerprint, "vps"] + fixture.fileOptions)
        #expect(revoked.status == 0, "\(revoked)")
        #expect(Date().timeIntervalSince(started) < 60)
        #expect(try fixture.authorizedKeys() == fixture.userLines)
        #expect(try !fixture.signsIn(thief.path))
    }

    @Test("keys list with 20 home lines (about 10 KB each, far past ssh's usual 64 KiB of output): all 20 listed")
    func manyLines() throws {
        let fixture = try KeyLifeFixture()
        let lines = (0..<20).map { index in
            KeyAuthorization.line(
                for: SSHPublicKey(ed25519: (0..<32).map { _ in UInt8.random(in: 0...255) }, comment: "home\(index)"),
                role: .home,
                ends: [HostPort(host: "127.0.0.1", port: 20000 + index)], file: fixture.keysFile)
        }
        try writeBytes(Array(((fixture.userLines + lines).joined(separator: "\n") + "\n").utf8), to: fixture.keysFile)
        let listed = try fixture.run(["keys", "list", "vps"] + fixture.fileOptions)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            listed.stdout.split(separator: "\n").count == 20 && listed.stderr.contains("20 octunnel line(s)"),
            "\(listed.stderr)")
    }
}

/// A flag one thread sets and another reads, and a second one that says the racer is done.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    private let finished = DispatchSemaphore(value: 0)

    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
    func finish() { finished.signal() }
    func waitFinished() { finished.wait() }
}
