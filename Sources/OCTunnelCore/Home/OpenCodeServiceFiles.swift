import Foundation

/// OpenCode 2's background service as its own files describe it, read as OpenCode reads them
/// (upstream `packages/cli/src/services/service-config.ts`, `packages/util/src/global-roots.ts`,
/// `packages/client/src/effect/service.ts`):
///
/// - the **registration**, written by the running service: `<state>/opencode/<name>`, JSON
///   `{id?, version?, url, pid, password?}`, mode 0600 ("reading it is all a client needs to
///   connect");
/// - the **settings**, written by `opencode service set`: `<config>/opencode/<name>` (or
///   `$OPENCODE_CONFIG_DIR/<name>`), JSON `{hostname?, port?, password?, …}`, mode 0600.
///
/// `<name>` is per release channel (`fileName(channel:)`); `<state>` is `$XDG_STATE_HOME` or
/// `~/.local/state`, `<config>` `$XDG_CONFIG_HOME` or `~/.config` (an empty variable counts as
/// unset, as `global-roots.ts`'s `||` does).
public struct OpenCodeServiceFiles: Sendable {
    /// The channels whose service OpenCode's own clients share, in the order octunnel looks:
    /// the release channels (`service.json`), then `local` (a build from source).
    public static let channels = ["latest", "local"]

    public let environment: [String: String]
    public let userHome: String

    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, userHome: String = NSHomeDirectory()
    ) {
        self.environment = environment
        self.userHome = userHome
    }

    /// The file name of `channel` (`filename()` upstream): `service.json` for latest, dev, beta
    /// and next; `service-local.json`; `service-<name>.json` with every character outside
    /// `[A-Za-z0-9._-]` made `-` for any other.
    public static func fileName(channel: String) -> String {
        if ["latest", "dev", "beta", "next"].contains(channel) { return "service.json" }
        let safe = channel.unicodeScalars.map { scalar -> String in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
                ? String(scalar) : "-"
        }.joined()
        return "service-\(safe).json"
    }

    /// The port the service takes when nothing is set (`defaultPort()` upstream): 49374 (0xC0DE)
    /// for latest, dev, beta and next, 49375 for local, else 10000 + the first 8 hex digits of
    /// the channel's SHA-1 modulo 50000 (`Hash.fast`).
    public static func defaultPort(channel: String) -> Int {
        if ["latest", "dev", "beta", "next"].contains(channel) { return 0xC0DE }
        if channel == "local" { return 0xC0DF }
        let first = Crypto.sha1(Array(channel.utf8)).prefix(4).reduce(0) { $0 << 8 | Int($1) }
        return 10_000 + first % 50_000
    }

    /// `<state>/opencode`: where the running service registers itself.
    public var stateDirectory: String { Self.join(base(of: "XDG_STATE_HOME", default: ".local/state"), "opencode") }

    /// `$OPENCODE_CONFIG_DIR`, else `<config>/opencode`: where `opencode service set` writes.
    public var configDirectory: String {
        if let dir = environment["OPENCODE_CONFIG_DIR"], !dir.isEmpty { return dir }
        return Self.join(base(of: "XDG_CONFIG_HOME", default: ".config"), "opencode")
    }

    private func base(of variable: String, default relative: String) -> String {
        if let value = environment[variable], !value.isEmpty { return value }
        return Self.join(userHome, relative)
    }

    private static func join(_ a: String, _ b: String) -> String { a.hasSuffix("/") ? a + b : a + "/" + b }

    /// What `find()` found: the service's address here, its password if the files hold one,
    /// and which files said so (paths as `~/…`).
    public struct Service: Sendable, Equatable {
        public let address: HostPort
        public let password: String?
        /// The registration that gave the address, or nil when only the settings did (the service not running).
        public let registration: String?
        /// The file the password came from.
        public let passwordFile: String?
        /// The channel whose files these are.
        public let channel: String
        /// The registration's process, to tell a live registration from a stale one.
        public let pid: Int?
    }

    /// A file that is there but could not be used: its path and why, one line.
    public struct Problem: Sendable, Equatable {
        public let path: String
        public let reason: String
        public var text: String { "OpenCode's service file \(path) \(reason)" }
    }

    /// Looks at each channel in `channels` order: a registration whose process runs wins;
    /// else the settings' port (or the channel's default port once a settings file names no
    /// port) when a settings file exists, for a service not started yet. Nil when no channel has
    /// any file. Files that cannot be read or parsed, or that octunnel may not trust, are
    /// reported in `problems` and skipped.
    ///
    /// The files choose nothing off this machine: an address they name must be loopback (or
    /// `allowedHost`, the home host the user gave), and a password goes only to the address its
    /// own file names (the settings' password to a registration only when it names the port
    /// and host the settings do).
    public func find(
        allowedHost: String? = nil, processRuns: (Int) -> Bool = OpenCodeServiceFiles.processRuns
    ) -> (
        service: Service?, problems: [Problem]
    ) {
        var problems: [Problem] = []
        var fromSettings: Service?
        for channel in Self.channels {
            let name = Self.fileName(channel: channel)
            let settingsPath = Self.join(configDirectory, name)
            let settings = read(settingsPath, problems: &problems)
            let settingsPassword = nonEmpty(settings?.password)
            let settingsAddress = settings.flatMap { Self.settingsAddress($0, channel: channel) }
            let registrationPath = Self.join(stateDirectory, name)
            if let registration = read(registrationPath, problems: &problems) {
                switch Self.address(ofURL: registration.url) {
                case .some(let address) where !Self.isOnThisMachine(address.host, allowedHost: allowedHost):
                    problems.append(
                        Problem(
                            path: shown(registrationPath),
                            reason: "names \(address), not a loopback address: not "
                                + "used (octunnel forwards only to this machine, or to the --home-host you give)"))
                case .some(let address):
                    let pid = registration.pid
                    if let pid, pid > 0, !processRuns(pid) {
                        problems.append(
                            Problem(
                                path: shown(registrationPath),
                                reason: "names process \(pid), which is not running: "
                                    + "a stale registration"))
                    } else {
                        let own = nonEmpty(registration.password)
                        let fromSettings =
                            own == nil && settingsAddress.map { Self.sameService($0, address) } == true
                            ? settingsPassword : nil
                        let password = own ?? fromSettings
                        let file =
                            own != nil ? shown(registrationPath) : fromSettings != nil ? shown(settingsPath) : nil
                        return (
                            Service(
                                address: address, password: password, registration: shown(registrationPath),
                                passwordFile: file, channel: channel, pid: pid), problems
                        )
                    }
                case .none:
                    problems.append(
                        Problem(
                            path: shown(registrationPath), reason: "has no usable \"url\" (an http://HOST:PORT address)"
                        ))
                }
            }
            if settings != nil, fromSettings == nil {
                if let address = settingsAddress, Self.isOnThisMachine(address.host, allowedHost: allowedHost) {
                    fromSettings = Service(
                        address: address, password: settingsPassword, registration: nil,
                        passwordFile: settingsPassword != nil ? shown(settingsPath) : nil, channel: channel, pid: nil)
                } else if let address = settingsAddress {
                    problems.append(
                        Problem(
                            path: shown(settingsPath),
                            reason: "names \(address), not a loopback address: not used "
                                + "(octunnel forwards only to this machine, or to the --home-host you give)"))
                } else {
                    problems.append(Problem(path: shown(settingsPath), reason: "names no usable hostname and port"))
                }
            }
        }
        return (fromSettings, problems)
    }

    /// Where a settings file says the service listens: its hostname (a wildcard reached on
    /// loopback; none: loopback) and its port (none: the channel's default).
    private static func settingsAddress(_ settings: ServiceFileWire, channel: String) -> HostPort? {
        let port = settings.port ?? defaultPort(channel: channel)
        let named = settings.hostname.flatMap { $0.isEmpty ? nil : $0 }
        let host = named.map { HealthCheck.address(forBind: $0) } ?? Defaults.homeHost
        guard (1...65535).contains(port),
            (try? HostPort.parse(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")) != nil
        else {
            return nil
        }
        return HostPort(host: host, port: port)
    }

    /// Whether `host` is this machine as an address says it (loopback, or `localhost`), or the
    /// home host the user gave.
    static func isOnThisMachine(_ host: String, allowedHost: String?) -> Bool {
        Sockets.isLoopback(host) || host.lowercased() == "localhost"
            || (allowedHost.map { $0.lowercased() == host.lowercased() } ?? false)
    }

    /// Whether the settings' address and a registration's are the same service: one port, and
    /// one host (any two loopback spellings count as one).
    private static func sameService(_ settings: HostPort, _ registration: HostPort) -> Bool {
        guard settings.port == registration.port else { return false }
        let loopback = { (host: String) in Sockets.isLoopback(host) || host.lowercased() == "localhost" }
        return settings.host.lowercased() == registration.host.lowercased()
            || (loopback(settings.host) && loopback(registration.host))
    }

    /// A file's JSON object; nil when it is absent; a problem when it is there but not to be
    /// trusted or used, read as OpenSSH reads the files it trusts: opened without following a
    /// link and without blocking (`O_NOFOLLOW|O_NONBLOCK`), a regular file of the user's own
    /// that nobody else may write, at most 64 KiB, a JSON object. The checks are made on the
    /// descriptor that is read (`fstat`), so a file swapped after them is never the one read.
    private func read(_ path: String, problems: inout [Problem]) -> ServiceFileWire? {
        let opened: OpenedFile?
        do {
            opened = try OpenedFile.open(path, followingLinks: false)
        } catch {
            let reason =
                error.errno == .symbolicLink
                ? "is a symbolic link: not followed, not used (OpenCode writes a file there)"
                : "cannot be read (\(error.errno.description.lowercased()))"
            problems.append(Problem(path: shown(path), reason: reason))
            return nil
        }
        guard let file = opened else { return nil }
        guard file.isRegular else {
            problems.append(Problem(path: shown(path), reason: "is \(file.kind), not a regular file: not used"))
            return nil
        }
        guard file.info.isOwnedByMe else {
            problems.append(
                Problem(
                    path: shown(path),
                    reason: "is owned by uid \(file.info.owner), not you: not used (anyone else "
                        + "could write what it says)"))
            return nil
        }
        guard !file.info.isWritableByOthers else {
            problems.append(
                Problem(
                    path: shown(path),
                    reason: "may be written by others (mode "
                        + "\(String(file.info.permissions, radix: 8))): not used; `chmod go-w` it"))
            return nil
        }
        let bytes: [UInt8]
        do {
            bytes = try file.readAll(limit: 65_536)
        } catch {
            let reason = error.errno == .fileTooLarge ? "is larger than 64 KiB: not a service file" : "cannot be read"
            problems.append(Problem(path: shown(path), reason: reason))
            return nil
        }
        guard let object = try? JSONDecoder().decode(ServiceFileWire.self, from: Data(bytes)) else {
            problems.append(Problem(path: shown(path), reason: "is not a JSON object"))
            return nil
        }
        return object
    }

    /// The address of a registration's `url` (`http://127.0.0.1:49374`, `http://[::1]:49375`),
    /// wildcards made loopback as `localURL` upstream does.
    static func address(ofURL value: String?) -> HostPort? {
        guard let text = value, let url = URL(string: text), url.scheme == "http" || url.scheme == "https",
            var host = url.host, !host.isEmpty
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? (url.scheme == "https" ? 443 : 80)
        guard (1...65535).contains(port) else { return nil }
        let connectable = HealthCheck.address(forBind: host)
        guard
            (try? HostPort.parse(connectable.contains(":") ? "[\(connectable)]:\(port)" : "\(connectable):\(port)"))
                != nil
        else {
            return nil
        }
        return HostPort(host: connectable, port: port)
    }

    private func nonEmpty(_ text: String?) -> String? { text?.isEmpty == false ? text : nil }

    /// `path` as `~/…` under the user's home.
    func shown(_ path: String) -> String {
        path.hasPrefix(userHome + "/") ? "~" + path.dropFirst(userHome.count) : path
    }

    /// Whether process `pid` exists (signal 0; EPERM means it exists, as another user's).
    public static func processRuns(_ pid: Int) -> Bool {
        guard pid > 0, pid <= Int(Int32.max) else { return false }
        return Syscall.processExists(Int32(pid))
    }
}

/// One of OpenCode 2's service files, as `find` reads it: the registration in the state directory
/// (`{url, pid, password?, …}`) or the settings in the config directory (`{hostname?, port?,
/// password?, …}`). Any JSON object is one (every field optional, one of another type as if absent).
struct ServiceFileWire: Decodable {
    let url: String?, password: String?, hostname: String?
    /// Whole numbers as JSON carries them (a fraction cut, as `NSNumber.intValue` did); one too
    /// large for a port or a process id reads as -1, never a port or a process.
    let pid: Int?, port: Int?

    enum CodingKeys: String, CodingKey { case url, password, hostname, pid, port }

    init(from decoder: Decoder) throws {
        let object = try decoder.container(keyedBy: CodingKeys.self)
        url = object.lenient(.url)
        password = object.lenient(.password)
        hostname = object.lenient(.hostname)
        pid = Self.whole(object.lenient(.pid, as: Double.self))
        port = Self.whole(object.lenient(.port, as: Double.self))
    }

    private static func whole(_ value: Double?) -> Int? {
        guard let value else { return nil }
        return value.isFinite && abs(value) < 1e15 ? Int(value) : -1
    }
}
