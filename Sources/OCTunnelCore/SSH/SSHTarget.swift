import Foundation

/// An SSH destination `[user@]host[:port]`; the user defaults to the login name.
public struct SSHTarget: Hashable, Sendable, CustomStringConvertible, Codable {
    public let user: String
    public let host: String
    public let port: Int

    public init(user: String, host: String, port: Int) {
        self.user = user
        self.host = host
        self.port = port
    }

    /// Parses `[user@]host[:port]`, `user@[2001:db8::1]:2222` included.
    public static func parse(
        _ text: String, defaultUser: String = currentUserName()
    ) throws(TargetParseError) -> SSHTarget {
        var user = defaultUser
        var rest = text
        // The last `@` scalar: a combining mark after it (`@́`) must not hide it.
        let scalars = text.unicodeScalars
        if let at = scalars.lastIndex(of: "@") {
            user = String(scalars[..<at])
            rest = String(scalars[scalars.index(after: at)...])
            guard !user.isEmpty else { throw .init("empty user name in \(text)") }
            try validateUser(user)
        }
        let hostPort = try HostPort.parse(rest)
        return SSHTarget(user: user, host: hostPort.host, port: hostPort.port)
    }

    /// A login name ssh and a shell take as one plain word: letters, digits, `._-$`, not starting with `-`.
    static func validateUser(_ user: String) throws(TargetParseError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-$".unicodeScalars)
        guard !user.isEmpty, user.unicodeScalars.allSatisfy({ allowed.contains($0) }), user.unicodeScalars.first != "-"
        else {
            throw .init("user name \"\(user)\" has characters a login name cannot have")
        }
    }

    public var hostPort: HostPort { HostPort(host: host, port: port) }

    /// `user@host:port` (brackets around IPv6).
    public var description: String { "\(user)@\(hostPort)" }
}

/// The login name of the user running octunnel, as ssh uses by default.
public func currentUserName() -> String {
    if let name = Syscall.passwordEntry?.name { return name }
    if let name = ProcessInfo.processInfo.environment["USER"] { return name }
    return "root"
}
