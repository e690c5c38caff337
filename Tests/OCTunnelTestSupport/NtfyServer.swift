import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A real ntfy server (Debian 13's `ntfy` 2.11) on a free loopback port, with its own config,
/// message cache and, when asked, TLS with a CA this fixture makes (openssl) and access control
/// with a token (`ntfy user add`, `ntfy token add`). Stopped on `stop()` or deinit.
///
/// The binary comes from the Debian 13 root (`OCTUNNEL_NTFY_ROOT`, else `OCTUNNEL_SSHD_ROOT`, else
/// the build root scripts/test.sh makes in ~/.cache/octunnel/trixie-build-*), and runs through
/// that root's own dynamic loader and libraries: this machine's pid, network and paths, so the
/// test's temp directory needs no mount. With no root holding ntfy, `locate()` says why, and the
/// tests cancel visibly with that reason.
public final class NtfyServer: @unchecked Sendable {
    /// The Debian root holding /usr/bin/ntfy, or why there is none.
    public static let located: (root: String?, reason: String) = locate()

    public let directory: TempDirectory
    public let port: Int
    public let tls: Bool
    /// The access token of user `phone` (an admin: it may read and write every topic), with `auth`.
    public private(set) var token: String?
    /// The CA that signed the server's certificate (with `tls`).
    public var caFile: String { directory.file("ca.pem") }
    /// The base URL, `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`.
    public var url: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    private var running: RunningProcess?
    private let root: String

    public init(tls: Bool = false, auth: Bool = false) throws {
        guard let root = Self.located.root else { throw HarnessError(Self.located.reason) }
        self.root = root
        directory = try TempDirectory("octunnel-ntfy")
        port = freePort()
        self.tls = tls
        if tls { try makeCertificates() }
        var config = """
            base-url: "\(tls ? "https" : "http")://127.0.0.1:\(port)"
            cache-file: "\(directory.file("cache.db"))"
            keepalive-interval: "5s"
            visitor-request-limit-exempt-hosts: "127.0.0.1"
            visitor-subscription-limit: 1000
            """
        config +=
            tls
            ? "\nlisten-http: \"-\"\nlisten-https: \"127.0.0.1:\(port)\"\nkey-file: \"\(directory.file("server.key"))\""
                + "\ncert-file: \"\(directory.file("server.pem"))\""
            : "\nlisten-http: \"127.0.0.1:\(port)\""
        if auth { config += "\nauth-file: \"\(directory.file("auth.db"))\"\nauth-default-access: \"deny-all\"" }
        try directory.write("server.yml", config + "\n")
        // ntfy makes its auth file when it starts; its user and token commands need it there.
        try start()
        if auth {
            try tool(
                ["user", "--config", directory.file("server.yml"), "add", "--role=admin", "phone"],
                environment: ["NTFY_PASSWORD": "phone-password-1"])
            let made = try tool(["token", "--config", directory.file("server.yml"), "add", "phone"])
            guard let range = (made.stdout + made.stderr).range(of: #"tk_[A-Za-z0-9]+"#, options: .regularExpression)
            else {
                throw HarnessError("ntfy token add printed no token: \(made)")
            }
            token = String((made.stdout + made.stderr)[range])
        }
    }

    deinit { stop() }

    /// Starts (or starts again, on the same port and cache) and waits until it serves.
    public func start() throws {
        let process = try RunningProcess(loader, command(["serve", "--config", directory.file("server.yml")]))
        running = process
        guard process.waitForLine(containing: "Listening on", timeout: 30) != nil else {
            throw HarnessError("ntfy serve did not start: \(process.stderrText)")
        }
        // ntfy logs "Listening on" before its listeners bind (server.go starts each in a goroutine
        // after the line): wait until the port accepts, or a test's first request races the bind.
        guard waitUntil(timeout: 30, { Self.accepts(port: port) }) else {
            throw HarnessError(
                "ntfy serve said it listens but 127.0.0.1:\(port) accepts nothing: \(process.stderrText)")
        }
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted (then closed at once).
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Stops the server (SIGTERM, then SIGKILL) and waits for it to exit.
    public func stop() {
        running?.stopGracefullyOrKill()
        running = nil
    }

    /// What the server logged.
    public var log: String { running?.stderrText ?? "" }

    /// Every byte ntfy keeps on disk (its message cache and its write-ahead log), as text.
    public func storedBytes() -> String {
        ["cache.db", "cache.db-wal", "cache.db-shm"].map { name in
            String(
                decoding: (try? Data(contentsOf: URL(fileURLWithPath: directory.file(name)))) ?? Data(), as: UTF8.self)
        }.joined()
    }

    @discardableResult
    private func tool(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        let result = try run(
            "/usr/bin/env", environment.map { "\($0.key)=\($0.value)" } + [loader] + command(arguments))
        guard result.status == 0 else {
            throw HarnessError("ntfy \(arguments.joined(separator: " ")) failed: \(result)")
        }
        return result
    }

    private var loader: String { root + "/lib64/ld-linux-x86-64.so.2" }

    private func command(_ arguments: [String]) -> [String] {
        ["--library-path", "\(root)/lib/x86_64-linux-gnu:\(root)/usr/lib/x86_64-linux-gnu", root + "/usr/bin/ntfy"]
            + arguments
    }

    /// A CA, and a certificate for 127.0.0.1 it signs (openssl, this machine's).
    private func makeCertificates() throws {
        let d = directory
        try d.write("san.cnf", "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
        for step in [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj",
                "/CN=octunnel test CA",
                "-keyout", d.file("ca.key"), "-out", d.file("ca.pem"),
            ],
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1",
                "-keyout", d.file("server.key"), "-out", d.file("server.csr"),
            ],
            [
                "x509", "-req", "-in", d.file("server.csr"), "-CA", d.file("ca.pem"), "-CAkey", d.file("ca.key"),
                "-CAcreateserial",
                "-days", "2", "-extfile", d.file("san.cnf"), "-out", d.file("server.pem"),
            ],
        ] {
            let result = try run("/usr/bin/openssl", step)
            guard result.status == 0 else { throw HarnessError("openssl \(step[0]) failed: \(result)") }
        }
    }

    private static func locate() -> (root: String?, reason: String) {
        let environment = ProcessInfo.processInfo.environment
        var candidates = [environment["OCTUNNEL_NTFY_ROOT"], environment["OCTUNNEL_SSHD_ROOT"]].compactMap { $0 }.filter
        { !$0.isEmpty }
        let cache = (environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/octunnel"
        let built = ((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? [])
            .filter { $0.hasPrefix("trixie-build-") && !$0.contains(".partial") }.sorted().map { cache + "/" + $0 }
        candidates += built
        for root in candidates where FileManager.default.isExecutableFile(atPath: root + "/usr/bin/ntfy") {
            return (root, "")
        }
        let looked =
            candidates.isEmpty
            ? "no Debian 13 root yet in \(cache)" : "none of \(candidates.joined(separator: ", ")) has /usr/bin/ntfy"
        return (
            nil,
            "no ntfy server to test against: \(looked) (scripts/test.sh's Debian 13 leg makes the root and installs ntfy in it)"
        )
    }
}
