import Foundation

/// The saved tunnel: the RFC's SSHTunnelConfig (host, port, username, remotePort) plus the
/// local and home ports, in `config.json` (0600, written atomically).
public struct SavedSettings: Codable, Equatable, Sendable {
    public var host: String
    public var port: Int
    public var username: String
    public var remotePort: Int
    public var localPort: Int
    public var homePort: Int
    /// The VPS address the reverse tunnel listens on; absent (127.0.0.1) in files from before it was saved.
    public var remoteHost: String?
    /// Sign in with the ssh-agent's keys (`--agent`); absent (false) in older files.
    public var agent: Bool?

    public init(host: String, port: Int, username: String, remotePort: Int, localPort: Int, homePort: Int, remoteHost: String? = nil,
                agent: Bool? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.remotePort = remotePort
        self.localPort = localPort
        self.homePort = homePort
        self.remoteHost = remoteHost
        self.agent = agent
    }

    public var target: SSHTarget { SSHTarget(user: username, host: host, port: port) }

    /// The saved settings, nil when none; a file that is not valid is an error (exit 65), never replaced.
    public static func load(from home: OctunnelHome) throws(OCTunnelError) -> SavedSettings? {
        let bytes: [UInt8]?
        do { bytes = try FileBytes.read(home.configPath) } catch { throw .cannotRead(path: home.configPath, reason: error.description) }
        guard let bytes else { return nil }
        let settings: SavedSettings
        do {
            settings = try JSONDecoder().decode(SavedSettings.self, from: Data(bytes))
        } catch DecodingError.keyNotFound(let key, _) {
            throw .badConfig(path: home.configPath, reason: "\"\(key.stringValue)\" is missing")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            throw .badConfig(path: home.configPath, reason: "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type")
        } catch {
            throw .badConfig(path: home.configPath, reason: "not JSON")
        }
        do {
            for host in [settings.host, settings.remoteHost].compactMap({ $0 }) {
                _ = try HostPort.parse(host.contains(":") ? "[\(host)]" : host)
            }
            for (name, port) in [("port", settings.port), ("remotePort", settings.remotePort), ("homePort", settings.homePort)] {
                _ = try HostPort.parsePort(String(port))
                _ = name
            }
            _ = try HostPort.parsePort(String(settings.localPort), allowZero: true)
        } catch {
            throw .badConfig(path: home.configPath, reason: error.message)
        }
        return settings
    }

    /// Writes the settings atomically with mode 0600.
    public func save(to home: OctunnelHome) throws(OCTunnelError) {
        try home.prepare()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let data = try encoder.encode(self)
            try AtomicFile.write(Array(data) + [UInt8(ascii: "\n")], to: home.configPath, mode: 0o600)
        } catch let error as SystemError {
            throw .cannotWrite(path: home.configPath, reason: error.description)
        } catch {
            throw .cannotWrite(path: home.configPath, reason: "\(error)")
        }
    }
}
