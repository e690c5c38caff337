import Foundation

/// The user's Ed25519 identity in octunnel's home: generation, rotation and safe loading.
public struct KeyStore: Sendable {
    public let directory: OctunnelDirectory

    public init(directory: OctunnelDirectory) { self.directory = directory }

    public var privateKeyPath: String { directory.privateKeyPath }
    public var publicKeyPath: String { directory.publicKeyPath }
    public var previousPrivateKeyPath: String { directory.privateKeyPath + ".prev" }
    public var previousPublicKeyPath: String { directory.privateKeyPath + ".prev.pub" }
    /// A rotation's new pair before it becomes the current one (`keygen --rotate --install`).
    public var nextPrivateKeyPath: String { directory.privateKeyPath + ".next" }
    public var nextPublicKeyPath: String { directory.privateKeyPath + ".next.pub" }
    /// The pending rotation's state (`RotationState`): while it exists, `.next` is never deleted
    /// and a plain `keygen --rotate` is refused.
    public var rotationStatePath: String { directory.privateKeyPath + ".rotation" }
    /// Held while a key pair is made or rotated.
    var lockPath: String { directory.path + "/.keygen.lock" }

    /// What `keygen` made: the new public key and, after a rotation, the retired one.
    public struct Generated: Sendable {
        public let publicKey: SSHPublicKey
        public let privateKeyPath: String
        public let previous: SSHPublicKey?
        public let archivedOlder: String?
    }

    /// The default key comment, `octunnel@<hostname>`.
    public static func defaultComment() -> String {
        let name = Syscall.hostName
        return "octunnel@\(name.isEmpty ? "localhost" : name)"
    }

    /// Why `comment` cannot end a printed key line, or nil: a control character or an invisible
    /// format character (a bidi override such as U+202E, a zero-width one such as U+200B) would
    /// make the line read as something it is not.
    public static func commentProblem(_ comment: String) -> String? {
        guard
            let bad = comment.unicodeScalars.first(where: {
                $0.value < 0x20 || $0.value == 0x7f || (0x80...0x9f).contains($0.value)
                    || $0.properties.generalCategory == .format
            })
        else { return nil }
        return "--comment contains \(HostPort.unicodeName(bad)), "
            + "\(bad.properties.generalCategory == .format ? "an invisible format character" : "a control character")"
            + ": give one without it"
    }

    /// Makes a new key pair. Without `rotate` an existing key is never touched (exit 73);
    /// with it the current pair becomes `.prev` first, so a crash always leaves a whole pair.
    /// Runs under `lockPath`, so concurrent rotations happen one after the other.
    /// With `passphrase` the new key is written encrypted, as `ssh-keygen -N` writes it.
    public func generate(comment: String, rotate: Bool, passphrase: SecretBuffer? = nil) throws -> Generated {
        guard !comment.contains(where: \.isNewline) else {
            throw KeyError.badKeyFile(path: privateKeyPath, reason: "the comment cannot contain a line break")
        }
        try directory.prepare()
        let (privateText, publicKey) = try makePair(comment: comment, passphrase: passphrase)
        let publicText = Array((publicKey.line + "\n").utf8)

        // One key change at a time, as config.json's saves: a second `keygen --rotate` waits,
        // then retires the key the first one just printed (to .prev) instead of losing it.
        let lock = try FileLock.forChange(lockPath)
        defer { lock.release() }
        // A rotation on the VPS is half done: its new pair waits in .next; replacing the key now
        // would leave the VPS with a successor nobody holds.
        if FileBytes.exists(rotationStatePath) { throw KeyError.rotationPending(path: rotationStatePath) }
        let existing = FileBytes.exists(privateKeyPath)
        var previous: SSHPublicKey?
        var archived: String?
        if existing || FileBytes.exists(publicKeyPath) {
            guard rotate else { throw KeyError.keyExists(path: privateKeyPath) }
            guard existing else {
                throw KeyError.badKeyFile(
                    path: privateKeyPath,
                    reason: "it is missing but \(publicKeyPath) exists; move that file away before making a new key")
            }
            // The current key may be encrypted: its public half is enough to keep it.
            let current = try readKeyFile(at: privateKeyPath)
            let currentPublic = try publicHalf(at: privateKeyPath)
            archived = try archiveOlderPrevious()
            try write(current.raw, to: previousPrivateKeyPath, mode: 0o600)
            try write(Array((currentPublic.line + "\n").utf8), to: previousPublicKeyPath, mode: 0o644)
            try write(privateText, to: privateKeyPath, mode: 0o600)
            try write(publicText, to: publicKeyPath, mode: 0o644)
            previous = currentPublic
        } else {
            do {
                try AtomicFile.create(privateText, at: privateKeyPath, mode: 0o600)
            } catch let error where error.errno == .fileExists {
                throw KeyError.keyExists(path: privateKeyPath)
            } catch {
                throw LocalFileError.cannotWrite(path: privateKeyPath, reason: error.description)
            }
            try write(publicText, to: publicKeyPath, mode: 0o644)
        }
        return Generated(
            publicKey: publicKey, privateKeyPath: privateKeyPath, previous: previous, archivedOlder: archived)
    }

    /// A new key pair in OpenSSH's format: the private file's text and the public key.
    private func makePair(
        comment: String, passphrase: SecretBuffer?
    ) throws -> (privateText: [UInt8], publicKey: SSHPublicKey) {
        do {
            let pair = try Ed25519KeyPair.generate()
            let check = try Crypto.randomBytes(4).reduce(0) { $0 << 8 | UInt32($1) }
            let text = try OpenSSHPrivateKey.encode(pair, comment: comment, checkValue: check, passphrase: passphrase)
            return (Array(text.utf8), SSHPublicKey(ed25519: pair.publicKey, comment: comment))
        } catch {
            throw LocalFileError.cannotWrite(path: privateKeyPath, reason: "\(error)")
        }
    }

    /// Runs `body` holding the key lock, as `generate` does: one key change at a time.
    public func whileLocked<T>(_ body: () throws -> T) throws -> T {
        try directory.prepare()
        let lock = try FileLock.forChange(lockPath)
        defer { lock.release() }
        return try body()
    }

    /// The rotation's new pair (`.next`, unencrypted, 0600 / 0644, written atomically), made now,
    /// or the one already there: a pending new key is never replaced. Under `whileLocked`.
    func makeNext(comment: String) throws -> SSHPublicKey {
        if FileBytes.exists(nextPrivateKeyPath) { return try publicHalf(at: nextPrivateKeyPath) }
        let (privateText, publicKey) = try makePair(comment: comment, passphrase: nil)
        try write(Array((publicKey.line + "\n").utf8), to: nextPublicKeyPath, mode: 0o644)
        do {
            try AtomicFile.create(privateText, at: nextPrivateKeyPath, mode: 0o600)
        } catch {
            throw LocalFileError.cannotWrite(path: nextPrivateKeyPath, reason: error.description)
        }
        return publicKey
    }

    /// The rotation's local swap: the current pair becomes `.prev` (an older `.prev` archived
    /// first, as `generate` does), then `.next` becomes the current pair; `.next` stays until
    /// `removeNext`. Each file is replaced atomically, so a process that reads the key at any
    /// moment (`tunnel up` reconnecting) gets one whole key, old or new. Run again after a crash
    /// it carries on where it stopped. Under `whileLocked`.
    func promoteNext() throws -> (previous: SSHPublicKey, archived: String?) {
        let next = try readKeyFile(at: nextPrivateKeyPath)
        let nextPublic = try publicHalf(at: nextPrivateKeyPath)
        let currentPublic = try publicHalf(at: privateKeyPath)
        if currentPublic.blob == nextPublic.blob {
            return (try publicHalf(at: previousPrivateKeyPath), nil)
        }
        let current = try readKeyFile(at: privateKeyPath)
        var archived: String?
        if FileBytes.exists(previousPrivateKeyPath),
            (try? publicHalf(at: previousPrivateKeyPath))?.blob != currentPublic.blob
        {
            archived = try archiveOlderPrevious()
        }
        try write(current.raw, to: previousPrivateKeyPath, mode: 0o600)
        try write(Array((currentPublic.line + "\n").utf8), to: previousPublicKeyPath, mode: 0o644)
        try write(next.raw, to: privateKeyPath, mode: 0o600)
        try write(Array((nextPublic.line + "\n").utf8), to: publicKeyPath, mode: 0o644)
        return (currentPublic, archived)
    }

    /// Deletes the `.next` pair once it is the current key (never a key held nowhere else).
    func removeNext() throws {
        guard FileBytes.exists(nextPrivateKeyPath) else { return }
        guard try publicHalf(at: nextPrivateKeyPath).blob == publicHalf(at: privateKeyPath).blob else {
            throw LocalFileError.cannotWrite(
                path: nextPrivateKeyPath, reason: "it is not the current key; left in place")
        }
        do {
            try Syscall.removeFile(nextPublicKeyPath)
            try Syscall.removeFile(nextPrivateKeyPath)
        } catch {
            throw LocalFileError.cannotWrite(path: nextPrivateKeyPath, reason: error.description)
        }
    }

    /// Deletes the `.next` pair of a rotation that never got past asking the VPS: the VPS refused
    /// to add it, so no line anywhere names it. Only with the state file already gone.
    func discardNext() throws {
        guard !FileBytes.exists(rotationStatePath) else { throw KeyError.rotationPending(path: rotationStatePath) }
        do {
            try Syscall.removeFile(nextPublicKeyPath)
            try Syscall.removeFile(nextPrivateKeyPath)
        } catch {
            throw LocalFileError.cannotWrite(path: nextPrivateKeyPath, reason: error.description)
        }
    }

    /// Moves an existing `.prev` pair aside under a timestamped name instead of deleting a key.
    private func archiveOlderPrevious() throws -> String? {
        guard FileBytes.exists(previousPrivateKeyPath) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        var target = privateKeyPath + ".prev-" + formatter.string(from: Date())
        var attempt = 1
        while FileBytes.exists(target) {
            attempt += 1
            target = privateKeyPath + ".prev-" + formatter.string(from: Date()) + "-\(attempt)"
        }
        do { try Syscall.hardLink(previousPrivateKeyPath, as: target) } catch {
            throw LocalFileError.cannotWrite(path: target, reason: error.errno.description)
        }
        if FileBytes.exists(previousPublicKeyPath) { try? Syscall.hardLink(previousPublicKeyPath, as: target + ".pub") }
        return target
    }

    private func write(_ bytes: [UInt8], to path: String, mode: UInt16) throws {
        do {
            try AtomicFile.write(bytes, to: path, mode: mode)
        } catch {
            throw LocalFileError.cannotWrite(path: path, reason: error.description)
        }
    }

    /// A private key read from disk: its bytes and what they decode to.
    public struct Loaded: Sendable {
        public let path: String
        public let raw: [UInt8]
        public let decoded: OpenSSHPrivateKey.Decoded
        /// Whether the file is passphrase-protected (then `decoded` is the decrypted key).
        public var wasEncrypted = false
    }

    /// Loads an unencrypted private key as ssh would: refuses a file others can read (77) and
    /// anything that is not a whole Ed25519 key in OpenSSH format (65); an encrypted key is
    /// opened with `unlockPrivateKey`.
    public func loadPrivateKey(at path: String? = nil) throws -> Loaded {
        let path = path ?? privateKeyPath
        let file = try readKeyFile(at: path)
        do {
            return Loaded(path: path, raw: file.raw, decoded: try OpenSSHPrivateKey.decode(file.text))
        } catch {
            throw KeyError.badKeyFile(path: path, reason: error.reason.replacingOccurrences(of: "FILE", with: path))
        }
    }

    /// Loads a private key, asking `passphrase` for one only when the key is encrypted.
    /// A wrong passphrase is exit 80; none to be had, 81. The passphrase is wiped on return.
    public func unlockPrivateKey(
        at path: String? = nil,
        passphrase: (String) throws(PassphraseFailure) -> SecretBuffer
    ) throws -> Loaded {
        let path = path ?? privateKeyPath
        let file = try readKeyFile(at: path)
        let isEncrypted: Bool
        do {
            isEncrypted = try OpenSSHPrivateKey.publicKey(of: file.text).isEncrypted
        } catch {
            throw KeyError.badKeyFile(path: path, reason: error.reason.replacingOccurrences(of: "FILE", with: path))
        }
        var secret: SecretBuffer?
        if isEncrypted {
            do {
                secret = try passphrase("Enter passphrase for key '\(path)': ")
            } catch {
                throw KeyError.passphraseUnavailable(
                    path: path,
                    reason: error.reason + "; or load the key into ssh-agent (`ssh-add \(path)`) and use --agent")
            }
        }
        defer { secret = nil }
        do {
            return Loaded(
                path: path, raw: file.raw, decoded: try OpenSSHPrivateKey.decode(file.text, passphrase: secret),
                wasEncrypted: isEncrypted)
        } catch {
            switch error {
            case .wrongPassphrase: throw KeyError.wrongPassphrase(path: path)
            case .needsPassphrase: throw KeyError.passphraseUnavailable(path: path, reason: "none was given")
            case .format(let format):
                throw KeyError.badKeyFile(
                    path: path, reason: format.reason.replacingOccurrences(of: "FILE", with: path))
            }
        }
    }

    /// The public key of a private key file, read without its passphrase: the blob is in the
    /// clear; the comment (encrypted with the key) comes from the `.pub` file beside it when
    /// that holds the same key.
    public func publicHalf(at path: String? = nil) throws -> SSHPublicKey {
        let path = path ?? privateKeyPath
        let file = try readKeyFile(at: path)
        let half: (key: SSHPublicKey, isEncrypted: Bool)
        do {
            half = try OpenSSHPrivateKey.publicKey(of: file.text)
            if !half.isEncrypted { return try OpenSSHPrivateKey.decode(file.text).publicKey }
        } catch {
            throw KeyError.badKeyFile(path: path, reason: error.reason.replacingOccurrences(of: "FILE", with: path))
        }
        if let bytes = try? FileBytes.read(path + ".pub"), let line = String(validating: bytes, as: UTF8.self),
            let listed = SSHPublicKey.parse(line: line.trimmingCharacters(in: .whitespacesAndNewlines)),
            listed.blob == half.key.blob
        {
            return listed
        }
        return half.key
    }

    /// A key file is a few KiB; ssh refuses one over 1 MiB (MAX_KEY_FILE_SIZE) and so does octunnel.
    static let sizeLimit = 1 << 20

    /// Reads a private key file, refusing what ssh refuses before reading a byte of it: not a
    /// regular file (a FIFO, a device), readable by others, or too large.
    private func readKeyFile(at path: String) throws -> (raw: [UInt8], text: String) {
        let opened: OpenedFile?
        do {
            opened = try OpenedFile.open(path)
        } catch {
            throw LocalFileError.cannotRead(path: path, reason: error.description)
        }
        guard let file = opened else { throw KeyError.noKey(path: path) }
        guard file.isRegular else {
            throw KeyError.badKeyFile(path: path, reason: "it is \(file.kind), not a regular file")
        }
        let mode = file.info.permissions & 0o777
        if mode & 0o077 != 0 {
            if let target = FileBytes.symlinkTarget(path) {
                throw KeyError.unsafeLinkedKeyPermissions(path: path, target: target, mode: mode)
            }
            throw KeyError.unsafeKeyPermissions(path: path, mode: mode)
        }
        let raw: [UInt8]
        do {
            raw = try file.readAll(limit: Self.sizeLimit)
        } catch {
            throw KeyError.badKeyFile(path: path, reason: error.reason ?? error.description)
        }
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw KeyError.badKeyFile(path: path, reason: "it is not text (binary or corrupt)")
        }
        return (raw, text)
    }

    /// The user's public key, read from the private key (the `.pub` file is a convenience copy).
    public func publicKey() throws -> SSHPublicKey {
        return try publicHalf()
    }
}

/// A destination nothing uses, for the forwarding option a key's role does not need: OpenSSH
/// 9.2 refuses `permitopen="none"` / `permitlisten="none"` in authorized_keys (sshd then drops
/// the whole line), and a key without the option may open or listen anywhere.
let authorizedKeysNowhere = "127.0.0.1:1"

/// The least-privilege authorized_keys line: the key may open the tunnel's forwards (one
/// `permitopen` each: OpenCode's, then the `-L` ones) and nothing else: no listening
/// (`permitlisten` on a port nothing uses, or a stolen laptop key could take the VPS port while
/// the home side is down) and no command of its choosing (`restrict` alone still runs one): its
/// forced command answers the rotation verbs (`KeyRotationVerb`) and refuses everything else, as
/// `/bin/false` did. `added` is the line's day (yyyymmdd, UTC; nil: today) and `file` the
/// authorized_keys file it goes in, which its rotation verbs edit (`OctunnelKeyLine`).
public func restrictedAuthorizedKeysLine(
    _ key: SSHPublicKey, targets: [HostPort], added: String? = nil,
    file: String = OctunnelKeyLine.defaultFile
) -> String {
    OctunnelKeyLine(role: .tunnel, ends: targets, key: key, added: added, file: file).line
}

/// `restrictedAuthorizedKeysLine` for one forward, to `remoteHost:remotePort`.
public func restrictedAuthorizedKeysLine(
    _ key: SSHPublicKey, remoteHost: String = Defaults.remoteHost, remotePort: Int
) -> String {
    restrictedAuthorizedKeysLine(key, targets: [HostPort(host: remoteHost, port: remotePort)])
}

/// The home key's least-privilege authorized_keys line (`pubkey --restrict --listen`): it may
/// ask the VPS to listen on `listens` (one `permitlisten` each: OpenCode's, then the `-R`
/// ones) and nothing else: no other listen (`permitlisten`, OpenSSH 7.8+), no forward of its
/// own (`permitopen` on a port nothing uses), no pty, agent or X11 (`restrict`), and no command
/// but its program: the rotation verbs (`KeyRotationVerb`), then `PortReclaimProgram`, which can
/// only end a dead sshd session of this user that holds one of those very ports. `added` and
/// `file` as for `restrictedAuthorizedKeysLine`.
public func listenAuthorizedKeysLine(
    _ key: SSHPublicKey, listens: [HostPort], added: String? = nil,
    file: String = OctunnelKeyLine.defaultFile
) -> String {
    OctunnelKeyLine(role: .home, ends: listens, key: key, added: added, file: file).line
}

/// `listenAuthorizedKeysLine` for one listen on `remoteHost:remotePort`.
public func listenAuthorizedKeysLine(
    _ key: SSHPublicKey, remoteHost: String = Defaults.remoteHost, remotePort: Int
) -> String {
    listenAuthorizedKeysLine(key, listens: [HostPort(host: remoteHost, port: remotePort)])
}

/// The options of `listenAuthorizedKeysLine`, for messages that do not have the key at hand:
/// its program carries no tag (`K=`), so the line works but its rotation verbs refuse.
public func listenAuthorizedKeysOptions(listens: [HostPort]) -> String {
    OctunnelKeyLine.options(
        role: .home, ends: listens,
        command: OctunnelKeyLine.forcedCommand(role: .home, ends: listens, tag: nil, added: OctunnelKeyLine.today()))
}

/// `listenAuthorizedKeysOptions` for one listen on `remoteHost:remotePort`.
public func listenAuthorizedKeysOptions(remoteHost: String = Defaults.remoteHost, remotePort: Int) -> String {
    listenAuthorizedKeysOptions(listens: [HostPort(host: remoteHost, port: remotePort)])
}
