import Foundation

/// Where `home up` carries OpenCode's connections, and what it tells the user about why there.
///
/// Without `--home-port` (and with no port saved but the default), OpenCode 2's background
/// service is looked for in its own files (`OpenCodeServiceFiles`): found, it is the home end
/// of OpenCode's forward and its password is the health test's (it never leaves this machine);
/// when a server also answers on the default port (a foreground `opencode serve`), the service
/// still wins and the line says how to pick the other. Files that cannot be used are named, one
/// line each, and today's default stays.
public struct HomeOpenCode: Sendable {
    /// OpenCode's address here.
    public let home: HostPort
    /// The service whose files named it, if any.
    public let service: OpenCodeServiceFiles.Service?
    /// What to tell the user, one line each.
    public let lines: [String]

    /// `configured`: the address from the flags, the saved settings or the default;
    /// `portGiven`: whether the user chose its port (`--home-port`, or a saved port other than
    /// the default). `answers` says whether something accepts connections on an address.
    public static func choose(
        configured: HostPort, portGiven: Bool, files: OpenCodeServiceFiles = OpenCodeServiceFiles(),
        answers: (HostPort) -> Bool = HomeOpenCode.accepts
    ) -> HomeOpenCode {
        guard !portGiven else { return HomeOpenCode(home: configured, service: nil, lines: []) }
        let (found, problems) = files.find(allowedHost: configured.host)
        var lines = problems.map { OutsideText.shown($0.text) }
        guard let service = found else {
            if !problems.isEmpty { lines.append("forwarding to \(configured), the default") }
            return HomeOpenCode(home: configured, service: nil, lines: lines)
        }
        var line: String
        if let registration = service.registration {
            line = "OpenCode 2's background service (\(service.channel)) at \(service.address), from \(registration)"
        } else {
            line =
                "OpenCode 2's background service (\(service.channel)) "
                + "is not running; its settings name \(service.address) "
                + "(from \(files.shown(files.configDirectory))): forwarding there"
        }
        line +=
            service.passwordFile.map { "; its password from \($0), kept on this machine" }
            ?? "; no password in its files"
        if service.address != configured, answers(configured) {
            line +=
                "; OpenCode also answers on \(configured) (a foreground "
                + "`opencode serve`?): give --home-port \(configured.port) to forward that one instead"
        }
        lines.append(OutsideText.shown(line))
        return HomeOpenCode(home: service.address, service: service, lines: lines)
    }

    /// The health test's credentials: the user's when they gave a password, else the service's.
    public func credentials(given: OpenCodeCredentials) -> OpenCodeCredentials {
        guard given.password == nil, given.source == nil, let service, let password = service.password,
            let file = service.passwordFile
        else { return given }
        return OpenCodeCredentials(password: password, source: .openCodeService(file))
    }

    /// Whether something accepts a TCP connection on `address` within a second.
    public static func accepts(_ address: HostPort) -> Bool {
        guard let socket = try? Sockets.connect(host: address.host, port: address.port, timeout: 1) else {
            return false
        }
        socket.close()
        return true
    }
}
