/// The passphrase for a new key: asked twice, as ssh-keygen does; both answers must match
/// and not be empty (an empty one would leave the key unencrypted).
public enum NewPassphrase {
    public static func ask(_ prompt: PassphrasePrompt, for path: String) throws -> SecretBuffer {
        let first: SecretBuffer
        let second: SecretBuffer
        do {
            first = try prompt.ask("Enter passphrase for the new key: ")
            second = try prompt.ask("Enter same passphrase again: ")
        } catch {
            throw KeyError.passphraseUnavailable(path: path, reason: error.reason)
        }
        guard first.count > 0, first.isEqual(to: second) else { throw KeyError.passphrasesDiffer }
        return first
    }
}
