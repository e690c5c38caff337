import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The client and the VPS on two machines (network namespaces) joined by one link, and that
/// link cut for a minute, as a train tunnel or a dead Wi-Fi would: nothing is closed, packets
/// just stop.
@Suite("a network cut between client and VPS", .ownThreads, .timeLimit(.minutes(6)))
struct NetworkCutTests {
    /// `--keepalive`: small, so that the whole test stays well inside its time limit.
    static let keepalive = 5.0
    /// `--connect-timeout` as `TunnelFixture.up` passes it.
    static let connectTimeout = 10.0
    /// A minute by hand (`scripts/soak.sh --long-tests`); 35 s in CI (issue 49), still past
    /// death (at most `deathBound`, 18.5 s) and a failed attempt (its connect timeout, 10 s).
    static let outage = TestLengths.seconds(field: 60, short: 35)

    /// The engine declares the session dead once `now − lastInbound > 3 × keepalive + 1 s`;
    /// it polls at least every 0.5 s while a probe is unanswered; 2 s for a loaded machine.
    static let deathBound = 3 * keepalive + 1 + 0.5 + 2
    /// The last answered probe is at most one interval old when the link goes, so death comes
    /// no sooner than 2 × keepalive + 1 s after the cut; earlier means something else killed it.
    static let deathNotBefore = 2 * keepalive
    /// An attempt while the link is down cannot get past TCP: it ends at the connect timeout.
    static let attemptBound = connectTimeout + 3
    /// After the link is back: an attempt in flight ends within the connect timeout (or
    /// succeeds), the next one starts within ReconnectPolicy's cap (30 s, jitter included),
    /// and a connect over a healthy veth takes well under 5 s.
    static let recoveryBound = connectTimeout + ReconnectPolicy().maximum + 5

    @Test(
        "the link down for a while (60 s by hand, 35 s in CI): keepalive declares the session dead in about three intervals; once the link is back the tunnel reconnects within the backoff and the same local port works"
    )
    func linkDownAndBack() async throws {
        let testStartedAt = Date()
        let net = try await namespacesOrSkip("NetworkCutTests") { try await offPool { try NetworkNamespacePair() } }
        // Deferred first, so it runs last: a namespace with a process still in it outlives its name.
        defer { net.remove() }
        let backend = try OpenCodeStandIn(launcher: net.exec(.server))
        defer { backend.stop() }
        let fixture = try TunnelFixture(sshdAddress: net.serverAddress, sshdLauncher: net.exec(.server))
        defer { fixture.sshd.stop(hard: true) }
        let tunnel = try fixture.up(
            remotePort: backend.port, extra: ["--json", "--keepalive", String(Int(Self.keepalive))],
            launcher: net.exec(.client))
        defer { tunnel.stopGracefullyOrKill() }
        let scratch = try TempDirectory("octunnel-netcut")

        let forwarding = try #require(
            await tunnel.event("forwarding", after: 0, timeout: 30), "\(tunnel.stdout) \(tunnel.stderrText)")
        let port = try #require(forwarding.object["localPort"] as? Int)
        try #require(await tunnel.event("connected", after: 0, timeout: 1) != nil)
        try expectBytesThrough(net, port: port, scratch: scratch, label: "before the cut")
        let setup = Date().timeIntervalSince(testStartedAt)

        // The cut: the VPS's end goes down, so the client keeps its route and carrier-less link
        // and its packets vanish (connects hang rather than fail at once).
        let beforeCut = tunnel.stdout.count
        try net.setLink(.server, up: false)
        let cutAt = Date()
        let death = await tunnel.event("disconnected", after: beforeCut, timeout: Self.deathBound + 15)
        let dead = try #require(
            death, "no disconnected event \(Int(Date().timeIntervalSince(cutAt))) s after the cut: \(tunnel.stdout)")
        let deathAfter = tunnel.stdoutArrival(dead.index).timeIntervalSince(cutAt)
        let reason = dead.object["reason"] as? String ?? ""
        #expect(reason.contains("(keepalive)"), "died of something else: \(reason)")
        #expect(
            deathAfter <= Self.deathBound,
            "declared dead \(deathAfter) s after the cut; keepalive \(Self.keepalive) s allows \(Self.deathBound)")
        #expect(deathAfter >= Self.deathNotBefore, "declared dead only \(deathAfter) s after the cut")

        // While the link is down every attempt must end on its own (connect timeout), not hang.
        var attempts: [Double] = []
        var lastFailure = ""
        var index = dead.index + 1
        while true {
            let remaining = Self.outage - Date().timeIntervalSince(cutAt)
            if remaining <= 0 { break }
            guard let connecting = await tunnel.event("connecting", after: index, timeout: remaining) else { break }
            let startedAt = tunnel.stdoutArrival(connecting.index)
            let left = Self.outage - Date().timeIntervalSince(cutAt)
            guard
                let failed = await tunnel.event(
                    "disconnected", after: connecting.index, timeout: min(max(left, 0), Self.attemptBound))
            else {
                #expect(
                    Date().timeIntervalSince(startedAt) < Self.attemptBound,
                    "an attempt during the outage did not end within \(Self.attemptBound) s: \(tunnel.stdout.suffix(5))"
                )
                break
            }
            attempts.append(tunnel.stdoutArrival(failed.index).timeIntervalSince(startedAt))
            lastFailure = failed.object["reason"] as? String ?? ""
            index = failed.index + 1
        }
        #expect(!attempts.isEmpty, "no reconnect attempt failed during the outage: \(tunnel.stdout.suffix(8))")
        #expect(
            await tunnel.event("connected", after: dead.index, timeout: 0) == nil, "connected while the link was down")
        // The one deliberate wait: the rest of the outage.
        let rest = Self.outage - Date().timeIntervalSince(cutAt)
        if rest > 0 { try await Task.sleep(nanoseconds: UInt64(rest * 1e9)) }

        try net.setLink(.server, up: true)
        let upAt = Date()
        let back = await tunnel.event("connected", after: dead.index, timeout: Self.recoveryBound + 10)
        let reconnected = try #require(
            back,
            "not connected \(Int(Date().timeIntervalSince(upAt))) s after the link came back: \(tunnel.stdout.suffix(8))"
        )
        let recoveredAfter = tunnel.stdoutArrival(reconnected.index).timeIntervalSince(upAt)
        #expect(
            recoveredAfter <= Self.recoveryBound,
            "reconnected \(recoveredAfter) s after the link came back; the backoff allows \(Self.recoveryBound)")
        try expectBytesThrough(net, port: port, scratch: scratch, label: "after the link came back")
        let health = await tunnel.event("health", after: reconnected.index, timeout: 15)
        #expect(health?.object["healthy"] as? Bool == true, "health after the reconnect: \(tunnel.stdout.suffix(4))")

        func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }
        FileHandle.standardError.write(
            Data(
                ("NetworkCutTests: set up in \(seconds(setup)); keepalive \(seconds(Self.keepalive)): dead \(seconds(deathAfter)) after the cut "
                    + "(bound \(seconds(Self.deathBound))); \(attempts.count) failed attempts during the outage (longest \(seconds(attempts.max() ?? 0)), "
                    + "last: \(lastFailure)); connected again \(seconds(recoveredAfter)) after the link came back (bound \(seconds(Self.recoveryBound))), checks done \(seconds(Date().timeIntervalSince(upAt))) after it\n")
                    .utf8))
        tunnel.signal(SIGINT)
        #expect(tunnel.waitForExit(timeout: 5) == 0, "\(tunnel.stderrText)")
    }
}
/// GETs /bytes/N through `port` on 127.0.0.1 from inside namespace `side` (the laptop's local
/// port, or the VPS's forwarded port) and checks every byte of the body (the stand-in sends
/// 0, 1, …, 255 repeated).
func expectBytesThrough(
    _ net: NetworkNamespacePair, side: NetworkNamespacePair.Side = .client, port: Int, scratch: TempDirectory,
    label: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let problem = try bytesThroughProblem(launcher: net.exec(side), port: port, scratch: scratch)
    try #require(problem == nil, "\(label): \(problem ?? "")", sourceLocation: sourceLocation)
}

/// Python for the test clients that GET through a tunnel: `get(port, path, timeout)` sends one
/// request for `path` to 127.0.0.1:`port` with `Connection: close` and returns every byte that
/// comes back until the server closes; a read that waits `timeout` s raises.
let pythonGet = """
    import socket, sys, threading, time
    def get(port, path, timeout):
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(("GET %s HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n" % path).encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return data
                data += chunk

    """

/// What went wrong GETting /bytes/N through 127.0.0.1:`port` from a program run under
/// `launcher` (e.g. `ip netns exec NS`), or nil when every byte of the body arrived right.
/// Blocking (up to 15 s per read) and free of test expectations, so it can run `offPool`.
func bytesThroughProblem(launcher: [String], port: Int, scratch: TempDirectory, timeout: Double = 15) throws -> String?
{
    let size = 300_000
    let output = scratch.file("response-\(UUID().uuidString)")
    let client =
        pythonGet + """
            port, path, out, timeout = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
            open(out, "wb").write(get(port, path, timeout))
            """
    let command = launcher + [python3, "-c", client, String(port), "/bytes/\(size)", output, String(timeout)]
    let result = try run(command[0], Array(command.dropFirst()))
    guard result.status == 0 else { return "the request failed: \(result.stderr.split(separator: "\n").last ?? "")" }
    let response = try readBytes(output)
    let separator = Array("\r\n\r\n".utf8)
    guard let headerEnd = (0..<max(0, response.count - 3)).first(where: { Array(response[$0..<$0 + 4]) == separator })
    else {
        return "no HTTP header in \(response.count) bytes"
    }
    let head = String(decoding: response[..<headerEnd], as: UTF8.self)
    guard head.hasPrefix("HTTP/1.1 200") || head.hasPrefix("HTTP/1.0 200") else { return "answered \(head)" }
    let body = Array(response[(headerEnd + 4)...])
    guard body.count == size else { return "\(body.count) of \(size) bytes" }
    guard body == (0..<size).map({ UInt8(truncatingIfNeeded: $0) }) else { return "the body differs" }
    return nil
}

extension RunningProcess {
    /// The first `tunnel up --json` event named `name` on stdout after line `index`, waiting up
    /// to `timeout` seconds for it; with its line index.
    /// Async, so the waits (minutes in all) leave the test pool's thread to other tests.
    func event(_ name: String, after index: Int, timeout: Double) async -> (index: Int, object: [String: Any])? {
        var found: (index: Int, object: [String: Any])?
        _ = await waitUntilAsync(timeout: timeout) {
            let lines = stdout
            for position in index..<max(index, lines.count) {
                guard
                    let object = try? JSONSerialization.jsonObject(with: Data(lines[position].utf8)) as? [String: Any],
                    object["event"] as? String == name
                else { continue }
                found = (position, object)
                return true
            }
            return false
        }
        return found
    }
}
