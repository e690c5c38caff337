import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Issue 55, finding 8: the user's ~/.ssh/config says `Host vps … IdentityFile <their shell key>`;
/// once `authorize vps` installed and proved octunnel's line, `tunnel check`, `tunnel up` and
/// `keygen --rotate --install` sign in with octunnel's key, not the config's, and say which.
@Suite("keys for life: the key octunnel authorized is the key it signs in with", .ownThreads, .timeLimit(.minutes(4)))
struct AuthorizedKeyFirstTests {
    @Test(
        "authorize vps, then tunnel check and tunnel status name octunnel's key, not the config's IdentityFile; --identity still chooses"
    )
    func authorizedKeyFirst() async throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn()
        let admin = try KeyStore(directory: OctunnelDirectory(path: fixture.octunnel.path)).publicHalf(
            at: fixture.adminKeyPath
        ).fingerprint
        let port = ["--remote-port", String(backend.port), "--connect-timeout", "10"]
        let before = try fixture.run(["tunnel", "check", "vps"] + port)
        #expect(before.stderr.contains("root with \(admin) (\(fixture.adminKeyPath))"), "\(before)")

        let authorized = try fixture.authorize(remotePort: backend.port)
        #expect(authorized.status == 0, "\(authorized)")
        #expect(
            authorized.stderr.contains("signs in to root@127.0.0.1:\(fixture.sshd.port) with this key from now on"),
            "\(authorized)")

        let checked = try fixture.run(["tunnel", "check", "vps"] + port)
        #expect(checked.status == 0, "\(checked)")
        #expect(checked.stderr.contains("root with \(fixture.key.fingerprint) (\(fixture.keyPath))"), "\(checked)")
        #expect(!checked.stderr.contains("root with \(admin)"), "\(checked)")
        #expect(checked.stderr.contains("authorized there by `octunnel authorize`"), "\(checked)")
        // Without root, what stays open and the lines an admin adds (authorize said it too).
        let open = "may still ask sshd for Unix-socket forwards"
        #expect(
            checked.stderr.contains(open) && checked.stderr.contains("Match User root / AllowStreamLocalForwarding no"),
            "\(checked)")
        #expect(authorized.stderr.contains(open), "\(authorized)")

        let tunnel = try fixture.start(["tunnel", "up", "vps", "--local-port", "0", "--no-health"] + port)
        defer { tunnel.stopGracefullyOrKill() }
        _ = try #require(try await offPool { tunnel.forwardedPort() }, "\(tunnel.stderrText)")
        let status = try fixture.run(["tunnel", "status"])
        #expect(
            status.stdout.contains("signed in   as root with \(fixture.key.fingerprint) (\(fixture.keyPath))"),
            "\(status)")
        let json = try fixture.run(["tunnel", "status", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(
            object?["clientKey"] as? String == fixture.key.fingerprint
                && object?["clientKeyFile"] as? String == fixture.keyPath, "\(json)")
        tunnel.stopGracefullyOrKill()

        // Named by the user, another key is still the one used.
        let chosen = try fixture.run(["tunnel", "check", "vps", "--identity", fixture.adminKeyPath] + port)
        #expect(chosen.stderr.contains("root with \(admin)"), "\(chosen)")
    }

    @Test(
        "after authorize vps, keygen --rotate --install vps rotates the key the tunnel signs in with (no 64 for the config's key)"
    )
    func rotationAgrees() throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn()
        #expect(try fixture.authorize(remotePort: backend.port).status == 0)
        let rotated = try fixture.run(["keygen", "--rotate", "--install", "vps", "--remote-port", String(backend.port)])
        #expect(rotated.status == 0, "\(rotated)")
        try expectChecksWithCurrentKey(fixture, remotePort: backend.port)
    }

    @Test(
        "after authorize vps, a rotation stopped half way is finished by the same command: the resumed run resolves the same key (no 64)"
    )
    func resumeAgrees() throws {
        let (backend, fixture) = try KeyLifeFixture.withStandIn()
        let arguments = ["keygen", "--rotate", "--install", "vps", "--remote-port", String(backend.port)]
        #expect(
            try fixture.authorize(remotePort: backend.port)
                .status == 0)
        let stopped = try fixture.run(arguments, environment: ["OCTUNNEL_FAULT": "rotation-stop-after-3"])
        #expect(stopped.status == 137, "\(stopped)")
        let finished = try fixture.run(arguments)
        #expect(finished.status == 0 && finished.stderr.contains("Finishing the rotation"), "\(finished)")
        try expectChecksWithCurrentKey(fixture, remotePort: backend.port)
    }

    /// `tunnel check vps` passes, signed in with the key octunnel's directory holds now (from its
    /// own file, not the config's IdentityFile).
    private func expectChecksWithCurrentKey(
        _ fixture: KeyLifeFixture, remotePort: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let fingerprint = try KeyStore(directory: OctunnelDirectory(path: fixture.octunnel.path)).publicKey()
            .fingerprint
        let checked = try fixture.run([
            "tunnel", "check", "vps", "--remote-port", String(remotePort), "--connect-timeout", "10",
        ])
        #expect(
            checked.status == 0 && checked.stderr.contains("root with \(fingerprint) (\(fixture.keyPath))"),
            "\(checked)", sourceLocation: sourceLocation)
    }
}
