import Foundation
import OCTunnelCore
import OCTunnelTestSupport

/// A VPS (a real sshd) whose authorized_keys holds the user's own lines (an admin key that may
/// do anything, a comment, another device's key), the user's $HOME with an ssh config that logs
/// in as that admin (`ssh vps`), and octunnel's directory with its key: what `authorize`,
/// `keys` and `keygen --rotate --install` meet on a user's machine. Everything lives in the
/// test's temp directories (the Debian 13 leg sees them at the same paths).
final class KeyLifeFixture: @unchecked Sendable {
    /// octunnel's directory (`--home`): its key.
    let octunnel: TempDirectory
    /// The user's $HOME: .ssh/config, the admin key, ssh's known_hosts.
    let user: TempDirectory
    let sshd: SSHDServer
    let key: SSHPublicKey
    let adminKeyPath: String
    /// The user's own lines, as they were before octunnel touched the file.
    let userLines: [String]
    /// The authorized_keys file sshd reads.
    let keysFile: String

    /// `authorize`'s and `keys`' options for this VPS: its file, and (authorize) sshd's own
    /// configuration, which names that file.
    var fileOptions: [String] { ["--file", keysFile] }
    var authorizeOptions: [String] { fileOptions + ["--sshd-config", sshd.directory.file("sshd_config")] }

    /// `octunnelLine` renders a line for octunnel's key to start with (a rotation needs one);
    /// nil leaves the file to `authorize`. `authorizedKeysFile` moves sshd's file elsewhere;
    /// `alsoReads` are more files sshd reads keys from after it.
    init(
        octunnelLine: ((SSHPublicKey, String) -> String)? = nil, sshdConfig: String = "",
        authorizedKeysFile: String? = nil,
        alsoReads: [String] = []
    ) throws {
        octunnel = try TempDirectory("octunnel-keylife")
        user = try TempDirectory("octunnel-user")
        key = try KeyStore(directory: OctunnelDirectory(path: octunnel.path)).generate(
            comment: "laptop@test", rotate: false
        ).publicKey
        adminKeyPath = user.file("admin")
        try runTool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "admin@test", "-f", adminKeyPath])
        let admin = try String(contentsOfFile: adminKeyPath + ".pub", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let other = SSHPublicKey(ed25519: [UInt8](repeating: 7, count: 32), comment: "another-device").line
        userLines = [admin, "# the user's own comment, kept as it is", "from=\"10.0.0.0/8\" " + other]
        // OpenSSH 9.8+ penalizes an address for each refused key; the tests refuse keys on purpose.
        var config = sshdConfig
        if SSHDServer.isOpenSSH(atLeast: 9, 8) { config += "\nPerSourcePenaltyExemptList 127.0.0.1" }
        if let authorizedKeysFile {
            config = "AuthorizedKeysFile \(([authorizedKeysFile] + alsoReads).joined(separator: " "))\n" + config
        }
        sshd = try SSHDServer(authorizedKeys: userLines, extraConfig: config)
        keysFile = authorizedKeysFile ?? sshd.authorizedKeysPath
        if let octunnelLine {
            try writeBytes(
                Array((userLines + [octunnelLine(key, keysFile)]).joined(separator: "\n").utf8 + [0x0a]), to: keysFile)
        } else if authorizedKeysFile != nil {
            try writeBytes(Array((userLines.joined(separator: "\n") + "\n").utf8), to: keysFile)
        }
        try FileManager.default.createDirectory(atPath: user.file(".ssh"), withIntermediateDirectories: true)
        try user.write(
            ".ssh/config",
            """
            Host vps
              HostName 127.0.0.1
              Port \(sshd.port)
              User root
              IdentityFile \(adminKeyPath)
              IdentitiesOnly yes
              UserKnownHostsFile \(user.file(".ssh/known_hosts"))
              StrictHostKeyChecking accept-new
              BatchMode yes

            """)
    }

    /// The VPS as `tunnel up` takes it.
    var target: String { "root@127.0.0.1:\(sshd.port)" }

    /// octunnel's environment: the user's $HOME (so `ssh vps` is the admin's login), a plain PATH.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": user.path, "LANG": "C.UTF-8"].merging(extra) { $1 }
    }

    /// Runs octunnel to completion with `--home` its directory (`keys` reads no octunnel file and takes none).
    func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> ProcessResult {
        let home = arguments.first == "keys" ? [] : ["--home", octunnel.path]
        return try OCTunnelTestSupport.run(octunnelBinary, arguments + home, environment: environment(extra))
    }

    /// Starts a long-running octunnel command (`tunnel up`, `home up`).
    func start(_ arguments: [String]) throws -> RunningProcess {
        try RunningProcess(octunnelBinary, arguments + ["--home", octunnel.path], environment: environment())
    }

    /// The file's lines now.
    func authorizedKeys() throws -> [String] {
        try String(contentsOfFile: keysFile, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init).filter { !$0.isEmpty }
    }

    var keyPath: String { octunnel.file("id_ed25519") }
    var previousKeyPath: String { octunnel.file("id_ed25519.prev") }

    /// The base64 blob of the key in `path` (a private key), for finding its line.
    func blob(ofKeyAt path: String) throws -> String {
        let key = try KeyStore(directory: OctunnelDirectory(path: octunnel.path)).publicHalf(at: path)
        return key.line.split(separator: " ")[1].description
    }

    /// OpenSSH's ssh with the key at `path` only, running `command` (the key's forced command answers).
    func ssh(_ path: String, _ command: String, extra: [String] = []) throws -> ProcessResult {
        try OCTunnelTestSupport.run(
            "/usr/bin/ssh",
            [
                "-F", "/dev/null", "-i", path, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
                "-p", String(sshd.port),
            ] + extra + ["root@127.0.0.1", command])
    }

    /// A new Ed25519 pair of the thief's (or the user's) in the user's directory: its private key's path and its public key.
    func newKey(_ name: String) throws -> (path: String, key: SSHPublicKey) {
        let path = user.file(name)
        try runTool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path])
        let line = try String(contentsOfFile: path + ".pub", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        guard let key = SSHPublicKey.parse(line: line) else { throw HarnessError("ssh-keygen wrote no key: \(line)") }
        return (path, key)
    }

    /// A copy of octunnel's current private key, as a thief who stole the laptop holds it.
    func stealKey() throws -> String {
        let path = user.file("stolen-\(UUID().uuidString.prefix(8))")
        try FileManager.default.copyItem(atPath: keyPath, toPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    /// Whether sshd lets the key at `path` sign in, asked with OpenSSH's client (the key's forced
    /// command runs `octunnel-inspect`; whatever it answers, only a refused login is ssh's 255).
    func signsIn(_ path: String) throws -> Bool {
        let result = try OCTunnelTestSupport.run(
            "/usr/bin/ssh",
            [
                "-F", "/dev/null", "-i", path, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                "-p", String(sshd.port), "root@127.0.0.1", "octunnel-inspect",
            ])
        if result.status == 255 && !result.stderr.contains("Permission denied") {
            throw HarnessError("ssh failed for another reason than a refused key: \(result)")
        }
        return result.status != 255
    }
}

extension KeyLifeFixture {
    /// A VPS and the OpenCode stand-in behind it, which lives as long as the caller keeps it.
    typealias BehindStandIn = (backend: OpenCodeStandIn, fixture: KeyLifeFixture)

    /// An OpenCode stand-in behind a VPS with none of octunnel's lines yet, or (`laptopLine`) one
    /// whose file already holds the laptop's line for it, as `authorize` leaves it: what a
    /// rotation, `keys revoke` or a thief with the key meet.
    static func withStandIn(laptopLine withLine: Bool = false) throws -> BehindStandIn {
        let backend = try OpenCodeStandIn()
        return (backend, try KeyLifeFixture(octunnelLine: withLine ? laptopLine(port: backend.port) : nil))
    }

    /// `authorize vps` for the laptop's forward to `remotePort`, with this VPS's file and sshd configuration.
    func authorize(remotePort: Int) throws -> ProcessResult {
        try run(["authorize", "vps", "--remote-port", String(remotePort)] + authorizeOptions)
    }
}

/// The laptop's line of a fixture key, as `authorize` renders it, for the VPS end `port`.
func laptopLine(port: Int) -> (SSHPublicKey, String) -> String {
    { key, file in
        KeyAuthorization.line(for: key, role: .tunnel, ends: [HostPort(host: "127.0.0.1", port: port)], file: file)
    }
}

/// The home's line of a fixture key, listening on `port`.
func homeLine(port: Int) -> (SSHPublicKey, String) -> String {
    { key, file in
        KeyAuthorization.line(for: key, role: .home, ends: [HostPort(host: "127.0.0.1", port: port)], file: file)
    }
}

/// Requests sent through a forward again and again on a thread of their own until `stop`,
/// every answer checked: the "0 failed requests" of a rotation under load.
final class RequestLoop: @unchecked Sendable {
    private let lock = NSLock()
    private var ok = 0
    private var failures: [String] = []
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(port: Int, path: String = "/global/health", pause: Double = 0.05) {
        Thread.detachNewThread { [self] in
            while !isStopped {
                let answer = httpGet(port: port, path: path) ?? ""
                lock.lock()
                if answer.hasPrefix("HTTP/1.1 200") || answer.hasPrefix("HTTP/1.0 200") {
                    ok += 1
                } else {
                    failures.append(String(answer.prefix(120)))
                }
                lock.unlock()
                Thread.sleep(forTimeInterval: pause)
            }
            done.signal()
        }
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// Stops after the request in flight; the counts.
    func stop() -> (ok: Int, failures: [String]) {
        lock.lock(); stopped = true; lock.unlock()
        done.wait()
        lock.lock(); defer { lock.unlock() }
        return (ok, failures)
    }

    var succeeded: Int { lock.lock(); defer { lock.unlock() }; return ok }
}
