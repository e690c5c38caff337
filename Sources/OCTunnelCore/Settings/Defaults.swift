/// The values octunnel uses when neither a flag, the saved settings nor ~/.ssh/config give
/// one. This is the one place they are written: the resolution (`ResolvedSettings.resolve`),
/// the options' help texts, the engines' options and the renderings all read them here.
public enum Defaults {
    /// The VPS address the home machine's reverse tunnel listens on (`--remote-host`).
    public static let remoteHost = "127.0.0.1"
    /// The VPS port the home machine's reverse tunnel listens on (`--remote-port`).
    public static let remotePort = 18080
    /// The address OpenCode listens on at home (`home up --home-host`).
    public static let homeHost = "127.0.0.1"
    /// OpenCode's port on the home machine (`--home-port`): `opencode serve`'s.
    public static let homePort = 4096
    /// The laptop's local listener (`tunnel up --bind`; ::1 beside it where there is one).
    public static let bind = "127.0.0.1"
    /// The port clients connect to on the laptop (`tunnel up --local-port`).
    public static let localPort = 4096
    /// Seconds between keepalive probes (`--keepalive`).
    public static let keepaliveSeconds = 15
    /// Seconds to wait for the VPS to answer (`--connect-timeout`).
    public static let connectTimeoutSeconds = 30
    /// Seconds the health test, and then the event stream, may take (`--health-timeout`).
    public static let healthTimeoutSeconds = 5
    /// Seconds `tunnel reconnect` and `home reconnect` wait for the new session (`--wait`).
    public static let reconnectWaitSeconds = 15
    /// Seconds `home up` gives a connection to the home port.
    public static let homeConnectTimeoutSeconds = 10
}
