import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// OpenCode 2's `opencode pair` links, printed at home for the service's own port, opened
/// unchanged on the laptop (issue 38). Three machines as network namespaces (home, VPS, laptop):
/// the service takes its real default port, 49374, at home, and the laptop's 49374 is its own.
@Suite("OpenCode 2's pair links through the tunnel", .ownThreads, .timeLimit(.minutes(3)))
struct OpenCodePairTests {
    /// As a browser opens a link: GET with `Accept: text/html`, the redirect followed with the
    /// cookie it set, then the API read as the web app does (`fetch('/api/info')`, same origin).
    /// Prints one line per step: `connect STATUS COOKIE-NAME`, `page STATUS`, `api STATUS BODY`, or `failed WHY`.
    static let browser = """
        import http.client, sys, urllib.parse
        link = urllib.parse.urlsplit(sys.argv[1])
        def get(path, headers):
            c = http.client.HTTPConnection(link.hostname, link.port, timeout=10)
            c.request("GET", path, headers=dict(headers, Host=link.netloc))
            r = c.getresponse(); body = r.read(); c.close()
            return r, body
        try:
            r, _ = get(link.path, {"Accept": "text/html"})
            cookie = (r.getheader("Set-Cookie") or "").split(";")[0]
            print("connect", r.status, cookie.split("=")[0], flush=True)
            r, _ = get(r.getheader("Location") or "/", {"Accept": "text/html", "Cookie": cookie})
            print("page", r.status, flush=True)
            r, body = get("/api/info", {"Cookie": cookie, "Origin": "http://" + link.netloc, "Sec-Fetch-Mode": "cors"})
            print("api", r.status, body.decode(errors="replace"), flush=True)
        except Exception as e:
            print("failed", type(e).__name__, e, flush=True)
        """

    @Test(
        "a pair link printed at home for 127.0.0.1:49374 opens on the laptop exactly as printed, through tunnel up (local port elsewhere, no password) and the VPS: the cookie is set for that port and the API answers with it; with --no-pair-port the same link fails and tunnel up has said what to do; 49374 held by another program here: named, skipped, the tunnel serves on"
    )
    func pairLinkOpensUnchanged() async throws {
        let (net, laptop) = try await HomeNetworkTests.machines("pairLink")
        defer { laptop.remove(); net.remove() }
        let scratch = try TempDirectory()
        let xdg = ["XDG_STATE_HOME": scratch.file("state"), "XDG_CONFIG_HOME": scratch.file("config")]
        let service = try OpenCodeStandIn(
            flavor: "opencode2", launcher: net.exec(.client), port: 49374, service: "latest", environment: xdg)
        defer { service.stop() }
        let fixture = try TunnelFixture(sshdAddress: net.serverAddress, sshdLauncher: net.exec(.server))
        defer { fixture.sshd.stop(hard: true) }
        let remotePort = freePort()
        let homeCommand =
            net.exec(.client) + [
                octunnelBinary, "home", "up", "--home", fixture.home.path, fixture.target,
                "--remote-port", String(remotePort), "--connect-timeout", "10",
            ]
        let home = try RunningProcess(
            homeCommand[0], Array(homeCommand.dropFirst()), environment: inheritedEnvironment.merging(xdg) { $1 })
        defer { home.stopGracefullyOrKill() }
        try #require(try await offPool { home.homeListening() } != nil, "\(home.stderrText)")

        let (tunnel, localPort, said) = try await Self.laptopTunnel(fixture, laptop, remotePort: remotePort)
        #expect(localPort != 49374)
        #expect(
            said
                == "pair links from home open here: http://127.0.0.1:49374/auth/connect/… (OpenCode 2's background service port, 49374 (its own port at home is not known without a password); --no-pair-port turns this off)",
            "\(tunnel.stderrText)")

        // A real browser: the link as printed, the redirect, the cookie, then the web app's own API read.
        let page = try await offPool {
            try Self.chromium(
                try Self.pairLink(net: net, scratch: scratch), in: laptop, profile: scratch.file("chromium"))
        }
        #expect(page.contains(#"<div id="root">API 200 {"version":"2.0.17""#), "\(page)")
        // The same steps spelled out: the cookie is the port's, as OpenCode names it.
        let opened = try await offPool { try Self.open(try Self.pairLink(net: net, scratch: scratch), in: laptop) }
        #expect(opened.first == "connect 302 opencode_session_49374", "\(opened)")
        #expect(opened.dropFirst().first == "page 200", "\(opened)")
        #expect(opened.last?.hasPrefix("api 200 {\"version\":\"2.0.17\"") == true, "\(opened)")
        tunnel.stopGracefullyOrKill()

        let (without, otherPort, told) = try await Self.laptopTunnel(
            fixture, laptop, remotePort: remotePort, extra: ["--no-pair-port"])
        defer { without.stopGracefullyOrKill() }
        #expect(
            told?.contains("--no-pair-port is set: open them with :\(otherPort) in place of :49374") == true,
            "\(without.stderrText)")
        let failedPage = try await offPool {
            try Self.chromium(
                try Self.pairLink(net: net, scratch: scratch), in: laptop, profile: scratch.file("chromium2"))
        }
        #expect(!failedPage.contains("API 200") && !failedPage.contains("id=\"root\""), "\(failedPage)")
        let refused = try await offPool { try Self.open(try Self.pairLink(net: net, scratch: scratch), in: laptop) }
        #expect(refused.count == 1 && refused.first?.hasPrefix("failed ConnectionRefusedError") == true, "\(refused)")
        without.stopGracefullyOrKill()

        // Another program holds 49374 on the laptop: named and skipped, the tunnel serves on.
        let holderCommand =
            laptop.exec + [
                python3, "-c",
                "import socket,sys,time\ns=socket.socket();s.bind(('127.0.0.1',49374));s.listen();print('HELD',flush=True);time.sleep(600)",
            ]
        let holder = try RunningProcess(holderCommand[0], Array(holderCommand.dropFirst()))
        defer { holder.signal(SIGKILL); _ = holder.waitForExit(timeout: 5) }
        try #require(try await offPool { holder.waitForLine(containing: "HELD", stdout: true) } != nil)
        let (busy, busyPort, named) = try await Self.laptopTunnel(fixture, laptop, remotePort: remotePort)
        defer { busy.stopGracefullyOrKill() }
        #expect(
            named?.contains(
                "name port 49374 (OpenCode 2's background service port, 49374 (its own port at home is not known without a password)), which is in use by another program here: open them with :\(busyPort) in place of :49374"
            ) == true,
            "\(busy.stderrText)")
        #expect(busy.isRunning)
        let served = try await offPool { try Self.getInLaptop(laptop, port: busyPort) }
        #expect(Self.answeredByOpenCode2(served), "\(served)")
    }

    /// `tunnel up` on `laptop` to `remotePort` (with `extra`): the tunnel, its local port once it forwards, and the line
    /// it says of pair links from home.
    static func laptopTunnel(
        _ fixture: TunnelFixture, _ laptop: NetworkNamespaceLink, remotePort: Int, extra: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (tunnel: RunningProcess, port: Int, pairLine: String?) {
        let tunnel = try fixture.up(remotePort: remotePort, extra: extra, launcher: laptop.exec)
        let port = try #require(
            try await offPool { tunnel.forwardedPort() }, "\(tunnel.stderrText)", sourceLocation: sourceLocation)
        return (tunnel, port, try await offPool { tunnel.waitForLine(containing: "pair links from home") })
    }

    static func answeredByOpenCode2(_ answer: String?) -> Bool {
        answer?.contains("401") == true && answer?.contains("UnauthorizedError") == true
    }

    /// GET /api/info on the laptop's 127.0.0.1:`port`, status line and body.
    static func getInLaptop(_ laptop: NetworkNamespaceLink, port: Int) throws -> String {
        let script =
            "import http.client,sys\nc=http.client.HTTPConnection('127.0.0.1',int(sys.argv[1]),timeout=10)\nc.request('GET','/api/info')\nr=c.getresponse()\nprint(r.status,r.read().decode())"
        let command = laptop.exec + [python3, "-c", script, String(port)]
        return try run(command[0], Array(command.dropFirst())).stdout
    }

    /// Debian's chromium, headless, on the laptop: opens `link` and returns the page's DOM once
    /// its scripts ran (`--virtual-time-budget`). scripts/test.sh installs it.
    static func chromium(_ link: String, in laptop: NetworkNamespaceLink, profile: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            throw HarnessError(
                "Debian's chromium is not installed: run the suite through scripts/test.sh, or apt-get install chromium"
            )
        }
        let command =
            laptop.exec + [
                "/usr/bin/timeout", "60", "/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                "--no-first-run",
                "--user-data-dir=" + profile, "--virtual-time-budget=5000", "--dump-dom", link,
            ]
        return try run(command[0], Array(command.dropFirst())).stdout
    }

    /// What `opencode pair` prints at home: a new one-time code from the service (POST /api/pair
    /// with its password, read from its registration), as a link on the service's own URL.
    static func pairLink(net: NetworkNamespacePair, scratch: TempDirectory) throws -> String {
        let script = """
            import base64, http.client, json, sys
            info = json.load(open(sys.argv[1]))
            c = http.client.HTTPConnection("127.0.0.1", int(info["url"].rsplit(":", 1)[1]), timeout=10)
            token = base64.b64encode(("opencode:" + info["password"]).encode()).decode()
            c.request("POST", "/api/pair", headers={"Authorization": "Basic " + token})
            print(info["url"] + "/auth/connect/" + json.loads(c.getresponse().read())["code"])
            """
        let command = net.exec(.client) + [python3, "-c", script, scratch.file("state") + "/opencode/service.json"]
        let result = try run(command[0], Array(command.dropFirst()))
        guard result.status == 0, result.stdout.hasPrefix("http://127.0.0.1:49374/auth/connect/") else {
            throw HarnessError("no pair link from the service: \(result)")
        }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Opens `link` on the laptop as a browser would (`browser`); its lines.
    static func open(_ link: String, in laptop: NetworkNamespaceLink) throws -> [String] {
        let command = laptop.exec + [python3, "-c", browser, link]
        return try run(command[0], Array(command.dropFirst())).stdout.split(separator: "\n").map(String.init)
    }
}
