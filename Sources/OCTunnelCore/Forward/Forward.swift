/// One forward a session carries, as `ssh -L` and `ssh -R` write it: which end listens, where,
/// and where each connection goes; and whether it is OpenCode's (the one the health test proves).
///
/// `-L [BIND:]PORT:HOST:HOSTPORT` (laptop side): listen on BIND:PORT here, connect to
/// HOST:HOSTPORT as the VPS sees it. `-R [VPS_BIND:]VPS_PORT:HOST:HOME_PORT` (home side): the
/// VPS listens on VPS_BIND:VPS_PORT, and each connection goes to HOST:HOME_PORT at home.
public struct Forward: Hashable, Sendable, CustomStringConvertible {
    /// Which end listens.
    public enum Direction: String, Sendable {
        /// This machine listens (`ssh -L`, `tunnel up`).
        case local
        /// The VPS listens (`ssh -R`, `home up`).
        case remote

        /// The flag that writes it.
        public var flag: String { self == .local ? "-L" : "-R" }
    }

    public var direction: Direction
    /// Where the listening end listens: this machine's address (`-L`) or the VPS's (`-R`).
    public var listen: HostPort
    /// Where each connection goes: as the VPS sees it (`-L`) or at home (`-R`).
    public var target: HostPort
    /// Whether this is the OpenCode forward (the default first one, health-tested as OpenCode).
    public var isOpenCode: Bool

    public init(direction: Direction, listen: HostPort, target: HostPort, isOpenCode: Bool = false) {
        self.direction = direction
        self.listen = listen
        self.target = target
        self.isOpenCode = isOpenCode
    }

    /// How messages name it: `opencode` or `:3000`, by its listening port.
    public var name: String { isOpenCode ? "opencode" : ":\(listen.port)" }

    /// The forward as its flag writes it: `-L 127.0.0.1:3000:127.0.0.1:3000`.
    public var description: String { "\(direction.flag) \(specification)" }

    /// What follows the flag, every field written: `127.0.0.1:3000:127.0.0.1:3000` (saved so).
    public var specification: String {
        "\(Self.bracketed(listen.host)):\(listen.port):\(Self.bracketed(target.host)):\(target.port)"
    }

    private static func bracketed(_ host: String) -> String {
        host.unicodeScalars.contains(":") ? "[\(host)]" : host
    }

    /// Parses `[BIND:]PORT:HOST:HOSTPORT` (`ForwardSpec`) and binds `defaultBind` when BIND is
    /// not written: for a value read from a file, where nothing else can give the bind.
    public static func parse(
        _ text: String, direction: Direction, defaultBind: String
    ) throws(TargetParseError) -> Forward {
        try ForwardSpec.parse(text, direction: direction).forward(defaultBind: defaultBind)
    }

    /// The VPS's end of this forward, the one a key line names: what a `-L` opens there (its
    /// target) or where a `-R` listens there.
    public var vpsEnd: HostPort {
        get { direction == .local ? target : listen }
        set { if direction == .local { target = newValue } else { listen = newValue } }
    }

    /// The VPS ends of `forwards`, each once, in their order: what a restricted key line allows.
    public static func vpsEnds(_ forwards: [Forward]) -> [HostPort] {
        var ends: [HostPort] = []
        for forward in forwards where !ends.contains(forward.vpsEnd) { ends.append(forward.vpsEnd) }
        return ends
    }

    /// `validate` for a command: a problem is `badForward` (exit 64). `allowLAN` counts as given
    /// when the first forward (OpenCode's, from `--bind` / `--remote-host`) is off loopback already.
    public static func check(_ forwards: [Forward], allowLAN: Bool) throws {
        do {
            try validate(
                forwards, allowLAN: allowLAN || forwards.first.map { !Sockets.isLoopback($0.listen.host) } ?? false)
        } catch {
            throw ForwardError.badForward(reason: error.message)
        }
    }

    /// The home's `-R` for this laptop `-L` (`3000:127.0.0.1:18081` → `127.0.0.1:18081:127.0.0.1:3000`):
    /// the VPS port it goes to, and its home port taken to be its local one, as a dev server's
    /// usually is. A remote forward is its own home side.
    public var homeSide: Forward {
        direction == .remote
            ? self
            : Forward(
                direction: .remote, listen: target, target: HostPort(host: Defaults.homeHost, port: listen.port),
                isOpenCode: isOpenCode)
    }

    /// Checks a session's forwards together: no listening port twice on the same end (a port
    /// given twice, or a local port equal to another forward's), and no listening address off
    /// loopback unless `allowLAN`. The first problem, as one line.
    public static func validate(_ forwards: [Forward], allowLAN: Bool) throws(TargetParseError) {
        var seen: [Direction: [Int: Forward]] = [:]
        for forward in forwards {
            if !allowLAN && !Sockets.isLoopback(forward.listen.host) && forward.listen.host != "localhost" {
                throw .init(
                    "\(forward) listens on \(forward.listen.host), not a loopback "
                        + "address: anyone on that network could use it. Add --allow-lan if that is what you want.")
            }
            if forward.listen.port != 0, let other = seen[forward.direction]?[forward.listen.port] {
                throw .init(
                    "\(forward) listens on port \(forward.listen.port), as \(other) does: give each forward its own port"
                )
            }
            seen[forward.direction, default: [:]][forward.listen.port] = forward
        }
    }
}
