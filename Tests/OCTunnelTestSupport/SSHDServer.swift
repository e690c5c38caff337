import Foundation

/// A throwaway OpenSSH sshd on 127.0.0.1 with its own config, host key and authorized_keys,
/// on a free port. Stopped (with every per-connection child) on `stop()` or deinit.
/// With `OCTUNNEL_SSHD_ROOT` set, the sshd of that Debian root (e.g. Debian 13's OpenSSH 10)
/// runs through chroot; see `root`.
public final class SSHDServer: @unchecked Sendable {
    /// The Debian root whose sshd runs (`OCTUNNEL_SSHD_ROOT`), nil for this machine's. chroot
    /// execs sshd in place, so its pid, its children (sshd-session, sshd-auth) and the network
    /// are this machine's as before. The root needs /proc and /dev mounted and this process's
    /// temp directory at the same path (scripts/test.sh's Debian 13 leg mounts them).
    public static let root: String? = {
        guard let root = ProcessInfo.processInfo.environment["OCTUNNEL_SSHD_ROOT"], !root.isEmpty else { return nil }
        return root
    }()

    /// The OpenSSH version of the sshd that runs (`sshd -V`, in the root when there is one),
    /// e.g. (10, 0); nil when it cannot be read.
    public static let openSSHVersion: (major: Int, minor: Int)? = {
        let chroot = root.map { ["/usr/sbin/chroot", $0] } ?? []
        let command = chroot + ["/usr/sbin/sshd", "-V"]
        guard let result = try? run(command[0], Array(command.dropFirst())),
            let range = (result.stderr + result.stdout).range(
                of: #"OpenSSH_[0-9]+\.[0-9]+"#, options: .regularExpression)
        else { return nil }
        let numbers = (result.stderr + result.stdout)[range].dropFirst("OpenSSH_".count).split(separator: ".")
            .compactMap { Int($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }()

    /// Whether the sshd that runs is OpenSSH `major`.`minor` or newer.
    public static func isOpenSSH(atLeast major: Int, _ minor: Int) -> Bool {
        guard let version = openSSHVersion else { return false }
        return version.major > major || (version.major == major && version.minor >= minor)
    }

    public let directory: TempDirectory
    public private(set) var port: Int = 0
    /// The address sshd listens on (127.0.0.1 unless it runs in a test's own namespace).
    public let listenAddress: String
    /// Prepended to sshd's command line, e.g. `ip netns exec NS` (which execs sshd, same pid).
    private let launcher: [String]
    public let hostKeyPath: String
    public let authorizedKeysPath: String
    public let logPath: String
    public var extraConfig: String
    /// sshd's pid. Not a Foundation `Process`: sshd closes every inherited descriptor at start,
    /// which Foundation on Linux takes for an exit and then blocks its monitor thread in waitpid.
    private var pid: pid_t = 0

    /// `launcher` and `listenAddress` run sshd in another network namespace, e.g.
    /// `NetworkNamespacePair.exec(.server)` and its `serverAddress`.
    public init(
        authorizedKeys: [String], hostKeyType: String = "ed25519", extraConfig: String = "",
        listenAddress: String = "127.0.0.1", launcher: [String] = []
    ) throws {
        self.listenAddress = listenAddress
        self.launcher = launcher
        directory = try TempDirectory("octunnel-sshd")
        hostKeyPath = directory.file("hostkey")
        authorizedKeysPath = directory.file("authorized_keys")
        logPath = directory.file("sshd.log")
        self.extraConfig = extraConfig
        try runTool("/usr/bin/ssh-keygen", ["-q", "-t", hostKeyType, "-N", "", "-f", hostKeyPath])
        try directory.write("authorized_keys", authorizedKeys.joined(separator: "\n") + "\n", mode: 0o600)
        try? FileManager.default.createDirectory(
            atPath: (Self.root ?? "") + "/run/sshd", withIntermediateDirectories: true)
        if let root = Self.root {
            for (path, what) in [
                (root + directory.file("authorized_keys"), "the test's temp directory \(directory.path)"),
                (root + "/proc/self/stat", "/proc"),
            ]
            where !FileManager.default.fileExists(atPath: path) {
                throw NSError(
                    domain: "SSHDServer", code: 2,
                    userInfo: [
                        NSLocalizedDescriptionKey:
                            "OCTUNNEL_SSHD_ROOT=\(root): \(what) is not visible inside it; mount it there (scripts/test.sh's Debian 13 leg does)"
                    ])
            }
        }
        try start()
    }

    /// Makes a new host key (as a reinstalled VPS would have); takes effect on the next start.
    public func regenerateHostKey(type: String = "ed25519") throws {
        try? FileManager.default.removeItem(atPath: hostKeyPath)
        try? FileManager.default.removeItem(atPath: hostKeyPath + ".pub")
        try runTool("/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-f", hostKeyPath])
    }

    public var hostKeyFingerprint: String {
        let output = (try? runTool("/usr/bin/ssh-keygen", ["-l", "-f", hostKeyPath + ".pub"])) ?? ""
        return output.split(separator: " ").dropFirst().first.map(String.init) ?? ""
    }

    /// Starts sshd (on the same port as before, if it ran already) and waits until it accepts.
    public func start() throws {
        for _ in 0..<5 {
            if port == 0 || pid != 0 { port = freePort() }
            // sshd keeps the first value it reads for a keyword: the test's own lines go first.
            // SHLVL=1: a login's shell starts as a nested one, so bash skips the ~/.bashrc it reads
            // for a command sshd runs (bash sources it only while SHLVL < 2). Logins as root then
            // never run this machine's rc files (here `pyenv init`, ~0.4 s a login, and 60 s when
            // its rehash lock is left stale), only the account's shell on a plain environment.
            let config = """
                \(extraConfig)
                Port \(port)
                ListenAddress \(listenAddress)
                HostKey \(hostKeyPath)
                AuthorizedKeysFile \(authorizedKeysPath)
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                UsePAM no
                StrictModes no
                AllowTcpForwarding yes
                PermitRootLogin yes
                PidFile \(directory.file("sshd.pid"))
                LogLevel VERBOSE
                UseDNS no
                SetEnv SHLVL=1
                """
            try directory.write("sshd_config", config + "\n", mode: 0o600)
            let listening = "Server listening on \(listenAddress) port \(port)."
            let listenedBefore = log.components(separatedBy: listening).count
            let chroot = Self.root.map { ["/usr/sbin/chroot", $0] } ?? []
            let command =
                launcher + chroot + ["/usr/sbin/sshd", "-D", "-f", directory.file("sshd_config"), "-E", logPath]
            pid = try spawn(command[0], Array(command.dropFirst()))
            let ready = waitUntil(timeout: 10) {
                guard isRunning else { return true }
                // In another namespace this process cannot connect: sshd's own log says it listens.
                if !launcher.isEmpty { return log.components(separatedBy: listening).count > listenedBefore }
                let fd = connectLoopback(port)
                if fd >= 0 { close(fd); return true }
                return false
            }
            if ready && isRunning { return }
            stop(hard: true)
        }
        throw NSError(
            domain: "SSHDServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "sshd did not start: \(log)"])
    }

    /// Stops sshd and every per-connection child: SIGTERM, or SIGKILL for `hard`.
    public func stop(hard: Bool = false) {
        guard pid != 0 else { return }
        let children = descendants(of: pid)
        for each in [pid] + children { kill(each, hard ? SIGKILL : SIGTERM) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // Children re-parent when sshd dies; make sure none keeps a tunnel alive.
        for each in children { kill(each, SIGKILL) }
        _ = waitUntil(timeout: 5) { children.allSatisfy { kill($0, 0) != 0 } }
        pid = 0
    }

    /// sshd's per-connection processes now, with their names (/proc/PID/comm): OpenSSH 9.8+ runs
    /// each connection in `sshd-session` (and, from 10.0, its authentication in `sshd-auth`),
    /// older ones in `sshd`. Found by parent pid, as `stop` finds them, through chroot as well.
    public var sessionProcesses: [(pid: Int32, name: String)] {
        guard pid != 0 else { return [] }
        return descendants(of: pid).map { child in
            (
                child,
                ((try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) ?? "").trimmingCharacters(
                    in: .whitespacesAndNewlines)
            )
        }
    }

    /// Freezes (SIGSTOP) every per-connection sshd process: a VPS that hangs with its TCP
    /// connections still open. `stop` or `thaw` ends it.
    public func freezeSessions() {
        for each in descendants(of: pid) { kill(each, SIGSTOP) }
    }

    /// Lets frozen sessions run again.
    public func thawSessions() {
        for each in descendants(of: pid) { kill(each, SIGCONT) }
    }

    /// Whether sshd is still running (reaps it if it exited).
    public var isRunning: Bool {
        guard pid != 0 else { return false }
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// Restarts on the same port.
    public func restart() throws {
        stop(hard: true)
        try start()
    }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The config line that makes sshd re-key each session every `limit` of data (e.g. "1M")
    /// and, with `seconds`, also on time (OpenSSH's `RekeyLimit default 1s` is `limit` "default").
    public static func rekeyLimit(_ limit: String, seconds: Int? = nil) -> String {
        "RekeyLimit \(limit)" + (seconds.map { " \($0)s" } ?? "")
    }

    deinit { stop(hard: true) }
}

/// This test process's environment without the OpenCode password and user variables, which
/// `octunnel` reads: a runner that happens to export OPENCODE_PASSWORD must not change a test.
/// Nor the desktop's session bus: a test's tunnel notifies only a desktop the test made
/// (`DesktopSession`), never the developer's own. Programs spawned without an explicit
/// environment get this one.
public var inheritedEnvironment: [String: String] {
    ProcessInfo.processInfo.environment.filter {
        !["OPENCODE_PASSWORD", "OPENCODE_SERVER_PASSWORD", "OPENCODE_SERVER_USERNAME", "DBUS_SESSION_BUS_ADDRESS"]
            .contains($0.key)
    }
}

/// Starts a program with posix_spawn, stdin/stdout/stderr on /dev/null; returns its pid.
public func spawn(_ path: String, _ arguments: [String]) throws -> pid_t {
    try spawn(path, arguments, stdin: -1, stdout: -1, stderr: -1, environment: nil)
}

/// Starts a program with posix_spawn, wiring the given descriptors (-1: /dev/null) to its
/// standard streams. Not Foundation's `Process`: ssh and sshd close every inherited
/// descriptor at start, which Foundation on Linux mistakes for an exit, after which its one
/// monitor thread blocks in waitpid and no other child's exit is ever seen.
public func spawn(
    _ path: String, _ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32,
    environment: [String: String]?
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (target, source) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
        if source >= 0 {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        } else {
            posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
        }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGPIPE)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let envp =
        addingSanitizerSettings(to: environment ?? inheritedEnvironment).map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { envp.forEach { free($0) } }
    let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
    return pid
}

/// Every process whose ancestry leads to `root`, read from /proc.
func descendants(of root: Int32) -> [Int32] {
    var parents: [Int32: Int32] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
        guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        if fields.count > 1, let ppid = Int32(fields[1]) { parents[pid] = ppid }
    }
    var result: [Int32] = []
    var frontier = [root]
    while let next = frontier.popLast() {
        for (pid, ppid) in parents where ppid == next {
            result.append(pid)
            frontier.append(pid)
        }
    }
    return result
}

/// Runs a tool to completion and returns its stdout; throws on a non-zero exit.
@discardableResult
public func runTool(_ path: String, _ arguments: [String], stdin: String? = nil) throws -> String {
    let result = try run(path, arguments, stdin: stdin)
    guard result.status == 0 else {
        throw NSError(
            domain: "runTool", code: Int(result.status),
            userInfo: [NSLocalizedDescriptionKey: "\(path) \(arguments) failed: \(result.stderr)"])
    }
    return result.stdout
}
