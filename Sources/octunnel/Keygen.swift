import ArgumentParser
import OCTunnelCore

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the Ed25519 key octunnel signs in with (OpenSSH format).",
        discussion: "Prints the public line on stdout. An existing " + "key is never overwritten; --rotate keeps it as "
            + "id_ed25519.prev. --rotate --install also replaces "
            + "it on the VPS, through the key's own line (installed by `octunnel authorize`), with no admin login."
    )

    @OptionGroup var options: DirectoryOptions
    @OptionGroup var profile: ProfileOptions
    @OptionGroup var targetOptions: TunnelTargetOptions

    @Option(help: "The key's comment (default: octunnel@<hostname>).")
    var comment: String?

    @Flag(help: "Replace the current key, keeping it as id_ed25519.prev / id_ed25519.prev.pub.")
    var rotate = false

    @OptionGroup var onVPS: RotationOnVPSFlags

    @Flag(
        help:
            "Encrypt the new key with a passphrase, as ssh-keygen does (asked twice on the terminal, or through SSH_ASKPASS)."
    )
    var passphrase = false

    func validate() throws {
        if let comment, comment.contains(where: \.isNewline) {
            throw ValidationError("--comment cannot contain a line break")
        }
        if let comment, let problem = KeyStore.commentProblem(comment) { throw ValidationError(problem) }
        if onVPS.install && !rotate {
            throw ValidationError("--install goes with --rotate: `octunnel keygen --rotate --install [TARGET]`")
        }
        if onVPS.install && passphrase {
            throw ValidationError(
                "--install makes the new key without a passphrase (a running "
                    + "tunnel signs in with it unattended); rotate without --install for an encrypted key")
        }
        if let ifOlderThan = onVPS.ifOlderThan, !(0...3650).contains(ifOlderThan) {
            throw ValidationError("--if-older-than \(ifOlderThan) is out of range (0-3650 days)")
        }
        if !onVPS.install
            && (onVPS.listen || onVPS.ifOlderThan != nil || targetOptions.target != nil
                || targetOptions.remotePort != nil || targetOptions.remoteHost != nil || targetOptions.homePort != nil)
        {
            throw ValidationError(
                "a target, --listen, --if-older-than, --remote-port, --remote-host and --home-port go with --rotate --install"
            )
        }
    }

    func run() throws {
        if onVPS.install { return try rotateOnVPS() }
        try runReportingErrors {
            let home = options.resolved
            if let note = try home.prepare() { Console.say("octunnel: \(note)") }
            let store = KeyStore(directory: home)
            let secret = passphrase ? try NewPassphrase.ask(PassphrasePrompt(), for: store.privateKeyPath) : nil
            let made = try store.generate(
                comment: comment ?? KeyStore.defaultComment(), rotate: rotate, passphrase: secret)
            Console.data(made.publicKey.line)
            Console.say(
                "Wrote \(made.privateKeyPath) (0600\(secret == nil ? "" : ", encrypted with your passphrase")) and \(store.publicKeyPath)."
            )
            Console.say("Fingerprint: \(made.publicKey.fingerprint)")
            if let previous = made.previous {
                Console.say("The previous key is now \(store.previousPrivateKeyPath) (\(previous.fingerprint)).")
                if let archived = made.archivedOlder {
                    Console.say("The key that was .prev before is kept as \(archived).")
                }
                Console.say("Next, in this order:")
                Console.say("  1. add the new line above to ~/.ssh/authorized_keys on the VPS;")
                Console.say("  2. check it works: octunnel tunnel check;")
                Console.say(
                    "  3. then delete the line with the old fingerprint \(previous.fingerprint) from authorized_keys.")
                Console.say(
                    "(`octunnel keygen --rotate --install` does all of this itself once the VPS has a line from `octunnel authorize`.)"
                )
            } else {
                Console.say(
                    "Put it on the VPS through your own ssh login: octunnel authorize user@vps (--listen on the home machine)"
                )
            }
        }
    }

    /// `--rotate --install`: `KeyRotation`, towards the pending rotation's target, else TARGET,
    /// else the saved one, for the role's OpenCode end.
    private func rotateOnVPS() throws {
        let home = options.resolved
        let store = KeyStore(directory: home)
        let pending = try? RotationState.load(store)
        let role = KeyRotation.role(
            listen: onVPS.listen, pending: pending, directory: home, profile: try profile.resolved)
        var chosen = targetOptions
        if chosen.target == nil { chosen.target = pending?.target }
        let settings = try chosen.resolve(role, directory: home, profile: try profile.resolved)
        if let problem = KeyRotation.keyProblem(settings, directory: home) { throw ValidationError(problem) }
        try runReportingErrors {
            try home.checkPermissions()
            guard let end = Forward.vpsEnds(settings.forwards).first else { return }
            let rotation = KeyRotation(
                store: store, check: KeyCheck(base: settings.connection(directory: home)),
                target: chosen.target ?? settings.target.description, role: role, end: end,
                comment: comment ?? KeyStore.defaultComment())
            guard let outcome = try rotation.run(ifOlderThan: onVPS.ifOlderThan, say: Console.say) else { return }
            Console.data(outcome.new.line)
            let resumed = outcome.resumed ? " (an interrupted rotation, finished)" : ""
            Console.say("Rotated on \(rotation.target): \(outcome.old) → \(outcome.new.fingerprint)\(resumed).")
            if let archived = outcome.archived { Console.say("The key that was .prev before is kept as \(archived).") }
            // `tunnel up` makes before it breaks: asked now, it signs in with the new key losing nothing.
            // `home up` cannot (its listen belongs to one session): it takes the new key at its next reconnect.
            let running = StatusEndpoint(directory: home, role: .tunnel, profile: try profile.resolved)
            if role == .tunnel, let pid = ReconnectRequest.askIfRunning(at: running) {
                Console.say(
                    "Asked the running tunnel up (pid \(pid)) to sign in with the new key: a new session now;"
                        + " connections open stay on the old one until they end.")
            }
        }
    }
}

/// `keygen --rotate --install`'s own flags: the rotation on the VPS, its role and its age.
struct RotationOnVPSFlags: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "With --rotate: install the new key on the VPS (TARGET, "
                + "default: the saved one) through the current key's "
                + "line, prove it, then remove the old line. Safe to stop anywhere: run it again to finish."))
    var install = false

    @Flag(
        help:
            "With --install: the home machine's key (`home up`'s saved settings and listen; the default when only those are saved)."
    )
    var listen = false

    @Option(
        help: ArgumentHelp(
            "With --install: rotate only if the key is at least DAYS days old "
                + "(a pending rotation is always finished); what `service install --rotate-every` runs daily.",
            valueName: "DAYS"))
    var ifOlderThan: Int?
}
