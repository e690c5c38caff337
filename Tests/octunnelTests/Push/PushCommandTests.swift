import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `octunnel push setup` and `push test` as a user runs them, against a real ntfy server and a
/// scripted phone (cancelled with the reason when no Debian 13 root holds ntfy).
@Suite("push setup and push test, end to end", .serialized, .timeLimit(.minutes(2)), .ownThreads)
struct PushCommandTests {
    @Test(
        "setup saves both topics and prints the address (stdout) and a QR code; test's button comes back (exit 0); no tap is exit 83"
    )
    func setupAndTest() throws {
        guard NtfyServer.located.root != nil else { try Test.cancel(Comment(rawValue: NtfyServer.located.reason)) }
        let server = try NtfyServer()
        let home = try TempDirectory("octunnel-push-home")
        let setup = try run(
            octunnelBinary, ["push", "setup", server.url, "--home", home.path, "--push-detail", "full"])
        #expect(setup.status == 0, "\(setup)")
        let address = setup.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(address.hasPrefix(server.url + "/oc-") && !address.contains("\n"))
        #expect(setup.stderr.contains("\u{2580}") && setup.stderr.contains("upstream-base-url"))
        let saved = try PushSettings.load(directory: OctunnelDirectory(path: home.path), profile: .default)
        #expect(
            saved?.url.text() == address && saved?.detail == .full
                && saved.map { !setup.stderr.contains($0.replyTopic) } == true)

        let tested = try RunningProcess(octunnelBinary, ["push", "test", "--home", home.path, "--wait", "30"])
        let phone = NtfyPhone(topicURL: address)
        let message = try phone.waitForMessages(1)[0]
        #expect(try phone.tap(NtfyPhone.actions(message)[0]) == 200)
        #expect(tested.waitForExit(timeout: 30) == 0, "\(tested.stderrText)")
        #expect(tested.stderrText.contains("the tap came back"))

        let untapped = try run(octunnelBinary, ["push", "test", "--home", home.path, "--wait", "2"])
        #expect(untapped.status == 83 && untapped.stderr.contains("no button was tapped within 2 s"), "\(untapped)")
    }

    @Test("mistakes: a bad URL 64, a token file others can read 77, no setup 66, nothing reachable 69; one line each")
    func mistakes() throws {
        let home = try TempDirectory("octunnel-push-home")
        let badURL = try run(octunnelBinary, ["push", "setup", "ftp://x/t", "--home", home.path])
        #expect(badURL.status == 64 && badURL.stderr.split(separator: "\n").count == 1, "\(badURL)")
        try home.write("token", "tk_secret123\n", mode: 0o644)
        let open = try run(
            octunnelBinary,
            ["push", "setup", "http://127.0.0.1:9/t", "--home", home.path, "--push-token-file", home.file("token")])
        #expect(open.status == 77 && !open.stderr.contains("tk_secret123"), "\(open)")
        let notSetUp = try run(octunnelBinary, ["push", "test", "--home", home.path])
        #expect(notSetUp.status == 66, "\(notSetUp)")
        let port = freePort()
        let nobody = try run(octunnelBinary, ["push", "setup", "http://127.0.0.1:\(port)/t", "--home", home.path])
        #expect(nobody.status == 69 && nobody.stderr.split(separator: "\n").count == 1, "\(nobody)")
        #expect(!FileManager.default.fileExists(atPath: home.file("config.json")))
    }

    @Test(
        "HTTPS_PROXY is honoured: setup reaches an HTTPS ntfy through a CONNECT proxy (scripts/connect-proxy.py), the test's CA trusted"
    )
    func proxy() throws {
        guard NtfyServer.located.root != nil else { try Test.cancel(Comment(rawValue: NtfyServer.located.reason)) }
        let server = try NtfyServer(tls: true)
        let home = try TempDirectory("octunnel-push-home")
        let proxy = try RunningProcess(
            "/usr/bin/python3", [packageRoot + "/scripts/connect-proxy.py", home.file("proxy.log")])
        defer { proxy.stopGracefullyOrKill() }
        let line = try #require(proxy.waitForLine(containing: "LISTENING", stdout: true, timeout: 15))
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment["HTTPS_PROXY"] = "http://127.0.0.1:\(line.split(separator: " ").last!)"
        let setup = try run(
            octunnelBinary, ["push", "setup", server.url, "--push-ca-file", server.caFile, "--home", home.path],
            environment: environment)
        #expect(setup.status == 0, "\(setup)")
        let log = (try? String(contentsOfFile: home.file("proxy.log"), encoding: .utf8)) ?? ""
        #expect(log.contains("CONNECT 127.0.0.1:\(server.port)"), "\(log)")
        let untrusted = try run(
            octunnelBinary, ["push", "setup", server.url, "--home", home.path], environment: environment)
        #expect(untrusted.status == 82 && untrusted.stderr.split(separator: "\n").count == 1, "\(untrusted)")
    }
}
