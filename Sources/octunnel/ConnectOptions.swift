import ArgumentParser
import OCTunnelCore

/// Options of a live connection (`up` and `check`).
struct ConnectOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The private key to sign in with (default: octunnel's id_ed25519); an encrypted one asks for its passphrase once.",
            valueName: "PATH"))
    var identity: String?

    @Flag(
        help:
            "Sign in with the keys of the ssh-agent at $SSH_AUTH_SOCK (Ed25519, ECDSA), in its order; no key file is read."
    )
    var agent = false

    @Option(help: "Seconds to wait for the VPS to answer.")
    var connectTimeout: Int = Defaults.connectTimeoutSeconds

    @Option(help: ArgumentHelp("Refuse the VPS unless its host key has this fingerprint.", valueName: "SHA256:…"))
    var expectFingerprint: String?

    @Flag(help: "Refuse a VPS whose host key is not known yet (no trust on first use).")
    var noTrustNew = false

    @Flag(
        help:
            "Do not look a new VPS up in ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts before trusting it on first use."
    )
    var noOpensshKnownHosts = false

    @Flag(help: "Print events as JSON on stdout.")
    var json = false

    @Option(help: "Seconds the health test and the event stream may take.")
    var healthTimeout: Int = Defaults.healthTimeoutSeconds

    @Option(
        help: ArgumentHelp(
            "A file holding OpenCode's password (only you may read it, "
                + "like a key; one trailing newline is dropped). Default: the "
                + "saved one, else $OPENCODE_PASSWORD, else $OPENCODE_SERVER_PASSWORD (set but empty: no password).",
            valueName: "PATH"))
    var passwordFile: String?

    /// The choices of an `up` run these options carry, with the command's own.
    func choices(keepalive: Int, allowLAN: Bool, health: Bool, save: Bool) -> UpFlow.Choices {
        var choices = UpFlow.Choices(keepalive: Double(keepalive), healthTimeout: Double(healthTimeout))
        (choices.allowLAN, choices.health, choices.save, choices.passwordFile) = (allowLAN, health, save, passwordFile)
        return choices
    }

    /// The sign-in flags, for the settings' resolution.
    func signInFlags(into flags: inout SettingsFlags) {
        flags.identity = identity
        flags.agent = agent
        flags.connectTimeout = connectTimeout
        flags.expectFingerprint = expectFingerprint
        flags.trustNew = !noTrustNew
        flags.openSSHKnownHosts = !noOpensshKnownHosts
    }

    func validate() throws {
        if agent && identity != nil {
            throw ValidationError("--agent and --identity cannot be combined: pick one way to sign in")
        }
        try refuseControlCharacters(identity, option: "--identity")
        try refuseControlCharacters(passwordFile, option: "--password-file")
        if let problem = OptionRange.connectTimeout.problem(connectTimeout)
            ?? OptionRange.healthTimeout.problem(healthTimeout)
        {
            throw ValidationError(problem)
        }
        if let expectFingerprint, !Fingerprint.isValid(expectFingerprint) {
            throw ValidationError(
                "--expect-fingerprint must look like SHA256:<43 base64 characters>, as `ssh-keygen -lf` prints")
        }
    }
}
