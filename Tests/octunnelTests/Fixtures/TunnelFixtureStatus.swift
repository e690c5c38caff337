import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

extension TunnelFixture {
    /// `ROLE status --json` of the fixture's home (`tunnel` or `home`), as an object; an error (not
    /// a recorded issue, so a poll may ask again) when it fails or prints no object.
    func status(_ role: String = "tunnel") throws -> [String: Any] {
        let result = try run([role, "status", "--json"])
        guard result.status == 0,
            let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else {
            throw HarnessError("\(role) status: \(result)")
        }
        return object
    }

    /// How many times sshd let a key sign in so far (its "Accepted publickey" lines).
    var logins: Int { sshd.log.components(separatedBy: .newlines).filter { $0.contains("Accepted publickey") }.count }

    /// `tunnel up` from this fixture's home, with this fixture's key, towards a server on loopback
    /// `port` that is not its sshd (one that drops, closes or babbles): no remote port asked for.
    func up(toServer port: Int) throws -> RunningProcess {
        try RunningProcess(
            octunnelBinary,
            [
                "tunnel", "up", "--home", home.path, "root@127.0.0.1:\(port)", "--local-port", "0",
                "--connect-timeout", "10",
            ])
    }

    /// `tunnel check` against such a server on loopback `port`.
    func check(server port: Int) throws -> ProcessResult {
        try run(["tunnel", "check", "root@127.0.0.1:\(port)", "--connect-timeout", "10"])
    }
}

/// A tunnel check refused before any SSH greeting by an sshd that penalizes this address
/// (PerSourcePenalties, or MaxStartups): exit 69, the penalty named, never "not an SSH server".
func expectPenaltyNamed(_ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 69, "\(result.stderr)", sourceLocation: sourceLocation)
    #expect(!result.stderr.contains("is not an SSH server"), "\(result.stderr)", sourceLocation: sourceLocation)
    #expect(
        result.stderr.contains("closed the connection before its SSH greeting")
            && result.stderr.contains("PerSourcePenalties"),
        "\(result.stderr)", sourceLocation: sourceLocation)
}

/// scripts/lib/delay-relay.py in front of a fixture's sshd on a free loopback port: every byte
/// `milliseconds` late each way, so each channel open takes a visible round trip. Stopped with it.
final class DelayRelay {
    let port: Int
    private let process: RunningProcess

    init(to sshd: SSHDServer, milliseconds: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        port = freePort()
        process = try RunningProcess(
            python3,
            [
                packageRoot + "/scripts/lib/delay-relay.py", "127.0.0.1", String(port), "127.0.0.1",
                String(sshd.port), String(milliseconds),
            ])
        let listening = process.waitForLine(containing: "LISTENING", stdout: true) != nil
        if !listening { stop() }
        try #require(listening, "\(process.stderrText)", sourceLocation: sourceLocation)
    }

    deinit { stop() }

    /// The VPS as `tunnel up` takes it, through the relay.
    var target: String { "root@127.0.0.1:\(port)" }

    /// Ends the relay (SIGTERM, then waits up to 5 s).
    func stop() {
        process.signal(SIGTERM)
        _ = process.waitForExit(timeout: 5)
    }
}

extension TunnelFixture {
    /// A fresh fixture and `tunnel up` (with `extra`) to an OpenCode stand-in behind its VPS, handed
    /// to `body` with the tunnel's local port once it forwards; the tunnel is stopped after `body`.
    static func withTunnelToStandIn<Result>(
        extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (TunnelFixture, RunningProcess, Int) throws -> Result
    ) throws -> Result {
        let fixture = try TunnelFixture()
        let (tunnel, port) = try fixture.upToStandIn(extra: extra, sourceLocation: sourceLocation)
        defer { tunnel.stopGracefullyOrKill() }
        return try body(fixture, tunnel, port)
    }
}
