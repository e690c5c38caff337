import ArgumentParser
import OCTunnelCore

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the Ed25519 key octunnel signs in with (OpenSSH format).",
        discussion: "Prints the public line on stdout. An existing key is never overwritten; --rotate keeps it as id_ed25519.prev."
    )

    @OptionGroup var options: DirectoryOptions

    @Option(help: "The key's comment (default: octunnel@<hostname>).")
    var comment: String?

    @Flag(help: "Replace the current key, keeping it as id_ed25519.prev / id_ed25519.prev.pub.")
    var rotate = false

    @Flag(help: "Encrypt the new key with a passphrase, as ssh-keygen does (asked twice on the terminal, or through SSH_ASKPASS).")
    var passphrase = false

    func validate() throws {
        if let comment, comment.contains(where: \.isNewline) {
            throw ValidationError("--comment cannot contain a line break")
        }
        if let comment, let problem = KeyStore.commentProblem(comment) { throw ValidationError(problem) }
    }

    func run() throws {
        try runReportingErrors {
            let home = options.resolved
            if let note = try home.prepare() { Console.say("octunnel: \(note)") }
            let store = KeyStore(home: home)
            let secret = passphrase ? try NewPassphrase.ask(PassphrasePrompt(), for: store.privateKeyPath) : nil
            let made = try store.generate(comment: comment ?? KeyStore.defaultComment(), rotate: rotate, passphrase: secret)
            Console.data(made.publicKey.line)
            Console.say("Wrote \(made.privateKeyPath) (0600\(secret == nil ? "" : ", encrypted with your passphrase")) and \(store.publicKeyPath).")
            Console.say("Fingerprint: \(made.publicKey.fingerprint)")
            if let previous = made.previous {
                Console.say("The previous key is now \(store.previousPrivateKeyPath) (\(previous.fingerprint)).")
                if let archived = made.archivedOlder { Console.say("The key that was .prev before is kept as \(archived).") }
                Console.say("Next, in this order:")
                Console.say("  1. add the new line above to ~/.ssh/authorized_keys on the VPS;")
                Console.say("  2. check it works: octunnel tunnel check;")
                Console.say("  3. then delete the line with the old fingerprint \(previous.fingerprint) from authorized_keys.")
            } else {
                Console.say("Add it to ~/.ssh/authorized_keys on the VPS: octunnel pubkey | ssh user@vps 'cat >> ~/.ssh/authorized_keys'")
            }
        }
    }
}
