import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A home directory with a key, a real sshd that authorizes it, and helpers to run the
/// built `octunnel tunnel up` against them.
final class TunnelFixture: @unchecked Sendable {
    let home: TempDirectory
    let key: SSHPublicKey
    let sshd: SSHDServer
    /// The servers behind the "VPS" that `upToEcho` started, stopped with the fixture.
    private var servers: [TCPTestServer] = []
    /// The OpenCode stand-ins behind the "VPS" that `upToStandIn` started, stopped with the fixture.
    private var standIns: [OpenCodeStandIn] = []

    /// `sshdAddress` and `sshdLauncher` put sshd elsewhere, e.g. in a `NetworkNamespacePair`.
    init(
        authorize: Bool = true, restricted: Int? = nil, sshdConfig: String = "",
        sshdAddress: String = "127.0.0.1", sshdLauncher: [String] = []
    ) throws {
        home = try TempDirectory("octunnel-home")
        let store = KeyStore(directory: OctunnelDirectory(path: home.path))
        let key = try store.generate(comment: "test@octunnel", rotate: false).publicKey
        self.key = key
        var lines: [String] = []
        if authorize {
            lines.append(restricted.map { restrictedAuthorizedKeysLine(key, remotePort: $0) } ?? key.line)
        }
        sshd = try SSHDServer(
            authorizedKeys: lines, extraConfig: sshdConfig, listenAddress: sshdAddress, launcher: sshdLauncher)
    }

    var target: String { "root@\(sshd.listenAddress):\(sshd.port)" }
    var knownHosts: String { home.file("known_hosts") }

    /// Starts `tunnel up` on a free local port towards `remotePort` on the "VPS"; `launcher`
    /// is prepended to the command line (e.g. `ip netns exec NS`); `via` replaces the target
    /// (e.g. a relay in front of sshd).
    func up(
        remotePort: Int, extra: [String] = [], launcher: [String] = [], via: String? = nil,
        environment: [String: String]? = nil
    ) throws -> RunningProcess {
        let command =
            launcher + [
                octunnelBinary, "tunnel", "up", "--home", home.path, via ?? target, "--local-port", "0",
                "--remote-port", String(remotePort), "--connect-timeout", "10",
            ] + extra
        return try RunningProcess(command[0], Array(command.dropFirst()), environment: environment)
    }

    /// Starts an echo server behind the "VPS" (it lives as long as the fixture) and `tunnel up`
    /// to it with `extra`: the tunnel and its local port, once it forwards.
    func upToEcho(
        extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (tunnel: RunningProcess, port: Int) {
        let echo = try TCPTestServer.echo()
        servers.append(echo)
        return try upForwarding(to: echo.port, extra: extra, sourceLocation: sourceLocation)
    }

    /// Starts an OpenCode stand-in behind the "VPS" (it lives as long as the fixture) and `tunnel
    /// up` to it with `extra`: the tunnel and its local port, once it forwards.
    func upToStandIn(
        extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws
        -> (tunnel: RunningProcess, port: Int)
    {
        let backend = try OpenCodeStandIn()
        standIns.append(backend)
        return try upForwarding(to: backend.port, extra: extra, sourceLocation: sourceLocation)
    }

    /// `tunnel up` to `remotePort` with `extra`, and its local port once it forwards.
    private func upForwarding(
        to remotePort: Int, extra: [String], sourceLocation: SourceLocation
    ) throws
        -> (tunnel: RunningProcess, port: Int)
    {
        let tunnel = try up(remotePort: remotePort, extra: extra)
        let port = try #require(tunnel.forwardedPort(), "\(tunnel.stderrText)", sourceLocation: sourceLocation)
        return (tunnel, port)
    }

    /// Runs octunnel to completion.
    func run(_ arguments: [String]) throws -> ProcessResult {
        try OCTunnelTestSupport.run(octunnelBinary, arguments + ["--home", home.path])
    }
}

extension RunningProcess {
    /// Waits for the "forwarding 127.0.0.1:PORT → …" line and returns PORT.
    func forwardedPort(timeout: Double = 20) -> Int? {
        guard let line = waitForLine(containing: "forwarding 127.0.0.1:", timeout: timeout) else { return nil }
        let afterColon = line.split(separator: "→").first?.split(separator: ":").last ?? ""
        return Int(afterColon.trimmingCharacters(in: .whitespaces))
    }
}

/// A plain HTTP/1.1 GET over a fresh connection to 127.0.0.1:port; returns the raw response.
func httpGet(port: Int, path: String) -> String? {
    let fd = connectLoopback(port)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    setSocketTimeout(fd, seconds: 10)
    guard writeAll(fd, Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)) else {
        return nil
    }
    return String(decoding: readAll(fd), as: UTF8.self)
}
