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

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, userHome: String = NSHomeDirectory()) {
        self.environment = environment
        self.userHome = userHome
    }

    /// The file name of `channel` (`filename()` upstream): `service.json` for latest, dev, beta
    /// and next; `service-local.json`; `service-<name>.json` with every character outside
    /// `[A-Za-z0-9._-]` made `-` for any other.
    public static func fileName(channel: String) -> String {
        if ["latest", "dev", "beta", "next"].contains(channel) { return "service.json" }
        let safe = channel.unicodeScalars.map { scalar -> String in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar)) ? String(scalar) : "-"
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
    /// any file. Files that cannot be read or parsed are reported in `problems` and skipped.
    public func find(processRuns: (Int) -> Bool = OpenCodeServiceFiles.processRuns) -> (service: Service?, problems: [Problem]) {
        var problems: [Problem] = []
        var fromSettings: Service?
        for channel in Self.channels {
            let name = Self.fileName(channel: channel)
            let settingsPath = Self.join(configDirectory, name)
            let settings = read(settingsPath, problems: &problems)
            let settingsPassword = nonEmpty(settings?["password"] as? String)
            let registrationPath = Self.join(stateDirectory, name)
            if let registration = read(registrationPath, problems: &problems) {
                switch Self.address(ofURL: registration["url"]) {
                case .some(let address):
                    let pid = (registration["pid"] as? NSNumber)?.intValue
                    if let pid, pid > 0, !processRuns(pid) {
                        problems.append(Problem(path: shown(registrationPath), reason: "names process \(pid), which is not running: a stale registration"))
                    } else {
                        let password = nonEmpty(registration["password"] as? String)
                        return (Service(address: address, password: password ?? settingsPassword, registration: shown(registrationPath),
                                        passwordFile: password != nil ? shown(registrationPath) : settingsPassword != nil ? shown(settingsPath) : nil,
                                        channel: channel, pid: pid), problems)
                    }
                case .none:
                    problems.append(Problem(path: shown(registrationPath), reason: "has no usable \"url\" (an http://HOST:PORT address)"))
                }
            }
            if let settings, fromSettings == nil {
                let port = (settings["port"] as? NSNumber)?.intValue ?? Self.defaultPort(channel: channel)
                let host = nonEmpty(settings["hostname"] as? String).map { HealthCheck.address(forBind: $0) } ?? Defaults.homeHost
                if (1...65535).contains(port), (try? HostPort.parse(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")) != nil {
                    fromSettings = Service(address: HostPort(host: host, port: port), password: settingsPassword, registration: nil,
                                           passwordFile: settingsPassword != nil ? shown(settingsPath) : nil, channel: channel, pid: nil)
                } else {
                    problems.append(Problem(path: shown(settingsPath), reason: "names no usable hostname and port"))
                }
            }
        }
        return (fromSettings, problems)
    }

    /// A file's JSON object; nil when it is absent; a problem when it is there but unreadable,
    /// too large or not a JSON object.
    private func read(_ path: String, problems: inout [Problem]) -> [String: Any]? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
        guard !isDirectory.boolValue else {
            problems.append(Problem(path: shown(path), reason: "cannot be read (a directory)"))
            return nil
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            problems.append(Problem(path: shown(path), reason: "cannot be read (permission denied)"))
            return nil
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: 65_537) ?? Data()
        } catch {
            problems.append(Problem(path: shown(path), reason: "cannot be read"))
            return nil
        }
        guard data.count <= 65_536 else {
            problems.append(Problem(path: shown(path), reason: "is larger than 64 KiB: not a service file"))
            return nil
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            problems.append(Problem(path: shown(path), reason: "is not a JSON object"))
            return nil
        }
        return object
    }

    /// The address of a registration's `url` (`http://127.0.0.1:49374`, `http://[::1]:49375`),
    /// wildcards made loopback as `localURL` upstream does.
    static func address(ofURL value: Any?) -> HostPort? {
        guard let text = value as? String, let url = URL(string: text), url.scheme == "http" || url.scheme == "https",
              var host = url.host, !host.isEmpty else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? (url.scheme == "https" ? 443 : 80)
        guard (1...65535).contains(port) else { return nil }
        let connectable = HealthCheck.address(forBind: host)
        guard (try? HostPort.parse(connectable.contains(":") ? "[\(connectable)]:\(port)" : "\(connectable):\(port)")) != nil else { return nil }
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
