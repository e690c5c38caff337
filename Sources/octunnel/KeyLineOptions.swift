import ArgumentParser
import OCTunnelCore

/// How a command's help words the flags of `KeyLineOptions`: which of its own flags they go with.
protocol KeyLineWording {
    /// The flags every key-line flag goes with (`pubkey`'s `--restrict`), none for `authorize`.
    static var goesWith: [String] { get }
    /// `--listen`'s help.
    static var listenHelp: String { get }
}

extension KeyLineWording {
    /// `text` after "With FLAGS: ", or capitalised where it goes with nothing.
    static func help(_ text: String, listen: Bool = false) -> String {
        let flags = goesWith + (listen ? ["--listen"] : [])
        return flags.isEmpty
            ? text.prefix(1).uppercased() + text.dropFirst() : "With \(flags.joined(separator: " ")): \(text)"
    }
}

/// The flags that choose a least-privilege line's forwards (`pubkey --restrict`, `authorize`),
/// and the forwards they choose.
struct KeyLineOptions<Wording: KeyLineWording>: ParsableArguments {
    @Flag(help: ArgumentHelp(Wording.listenHelp))
    var listen = false

    @Option(help: ArgumentHelp(Wording.help("the VPS port the home reverse tunnel listens on.")))
    var remotePort = Defaults.remotePort

    @Option(help: ArgumentHelp(Wording.help("the VPS address the home reverse tunnel listens on.")))
    var remoteHost = Defaults.remoteHost

    @Option(
        name: [.customShort("L"), .customLong("tunnel-forward")],
        help: ArgumentHelp(
            Wording.help("also allow this forward of `tunnel up -L`, as written there (repeatable)."),
            valueName: "[BIND:]PORT:HOST:HOSTPORT"))
    var tunnelForward: [ForwardArgument<ListensHere>] = []

    @Option(
        name: [.customShort("R"), .customLong("home-forward")],
        help: ArgumentHelp(
            Wording.help("also allow this forward of `home up -R`, as written there (repeatable).", listen: true),
            valueName: "[VPS_BIND:]VPS_PORT:HOST:HOME_PORT"))
    var homeForward: [ForwardArgument<ListensOnVPS>] = []

    @Flag(
        help: ArgumentHelp(
            Wording.help("allow a -L or -R listen off loopback, as `tunnel up --allow-lan` / `home up --allow-lan` do.")
        ))
    var allowLan = false

    /// Refuses a --remote-port or --remote-host no tunnel could use.
    func checkRemote() throws {
        try checkPort(remotePort, "--remote-port")
        _ = try parseHostPort(remoteHost.contains(":") ? "[\(remoteHost)]" : remoteHost)
    }

    /// The forwards the line is for, OpenCode's first (at the defaults of `tunnel up` /
    /// `home up`), checked as those commands check them: what they refuse, this refuses.
    func forwards() throws -> [Forward] {
        let remote = HostPort(host: remoteHost, port: remotePort)
        let openCode =
            listen
            ? Forward(
                direction: .remote, listen: remote, target: HostPort(host: Defaults.homeHost, port: Defaults.homePort),
                isOpenCode: true)
            : Forward(
                direction: .local, listen: HostPort(host: Defaults.bind, port: Defaults.localPort), target: remote,
                isOpenCode: true)
        let others =
            listen
            ? try homeForward.forwards(defaultBind: remoteHost) : try tunnelForward.forwards(defaultBind: Defaults.bind)
        return try checkForwards([openCode] + others, allowLAN: allowLan)
    }
}
