/// A forward as its flag writes it, `[BIND:]PORT:HOST:HOSTPORT`, parsed once: every field but
/// the bind, which another flag may give (`--bind`, `--remote-host`) when the text leaves it
/// out; `forward(defaultBind:)` makes it a `Forward`.
public struct ForwardSpec: Hashable, Sendable {
    /// The text as written, for the messages that quote it.
    public let text: String
    public let direction: Forward.Direction
    /// BIND, when written.
    public let bind: String?
    public let listenPort: Int
    public let targetHost: String
    public let targetPort: Int

    /// Parses `[BIND:]PORT:HOST:HOSTPORT`, an IPv6 address in brackets (`[::1]:3000:[::1]:3000`).
    /// PORT may be 0 only for `-L` (a free port is picked); HOSTPORT is never 0.
    public static func parse(_ text: String, direction: Forward.Direction) throws(TargetParseError) -> ForwardSpec {
        let fields = try split(text)
        guard fields.count == 3 || fields.count == 4 else { throw usage(text, direction) }
        let bind = fields.count == 4 ? fields[0] : nil
        let rest = fields.suffix(3)
        let listenPort = try HostPort.parsePort(rest[rest.startIndex], allowZero: direction == .local)
        let host = rest[rest.startIndex + 1]
        let targetPort = try HostPort.parsePort(rest[rest.startIndex + 2])
        guard bind?.isEmpty != true, !host.isEmpty else { throw usage(text, direction) }
        if let bind { try HostPort.validateHost(bind) }
        try HostPort.validateHost(host)
        return ForwardSpec(
            text: text, direction: direction, bind: bind, listenPort: listenPort, targetHost: host,
            targetPort: targetPort)
    }

    /// The forward, listening on BIND, else on `defaultBind`. A `-L` listens on an IP address
    /// of this machine (`localhost` is 127.0.0.1); a name is refused here, at validation, not
    /// when the listen fails after connecting.
    public func forward(defaultBind: String) throws(TargetParseError) -> Forward {
        let bind = self.bind ?? defaultBind
        guard !bind.isEmpty else { throw Self.usage(text, direction) }
        if self.bind == nil { try HostPort.validateHost(bind) }
        let listen = direction == .local ? try localListenAddress(bind) : bind
        return Forward(
            direction: direction, listen: HostPort(host: listen, port: listenPort),
            target: HostPort(host: targetHost, port: targetPort))
    }

    private func localListenAddress(_ bind: String) throws(TargetParseError) -> String {
        if bind.lowercased() == "localhost" { return Defaults.bind }
        guard Syscall.addressBytes(bind) != nil else {
            throw .init(
                "-L \"\(OutsideText.shown(text, limit: 100))\" listens on \"\(bind)\", "
                    + "which is not an IP address of this machine: give 127.0.0.1, ::1 or localhost")
        }
        return bind
    }

    private static func usage(_ text: String, _ direction: Forward.Direction) -> TargetParseError {
        .init("\(direction.flag) \"\(OutsideText.shown(text, limit: 100))\" is not [BIND:]PORT:HOST:HOSTPORT")
    }

    /// Splits on `:` outside brackets, the brackets taken off.
    private static func split(_ text: String) throws(TargetParseError) -> [String] {
        var fields: [String] = []
        var field = String.UnicodeScalarView()
        var bracketed = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "[" where field.isEmpty && !bracketed: bracketed = true
            case "]" where bracketed: bracketed = false
            case ":" where !bracketed:
                fields.append(String(field))
                field = String.UnicodeScalarView()
            default: field.append(scalar)
            }
        }
        guard !bracketed else { throw .init("missing ] in \"\(OutsideText.shown(text, limit: 100))\"") }
        fields.append(String(field))
        return fields
    }
}
