import Foundation

/// The host key step of `SSHConnector.connect`.
extension SSHConnector {
    /// The host key types octunnel's store and OpenSSH's files hold for the target, to ask for first.
    func knownHostKeyTypes() -> [String] {
        let target = settings.target
        var types = KnownHostsStore(path: settings.knownHostsPath).knownKeyTypes(host: target.host, port: target.port)
        for type in settings.openSSHKnownHosts?.knownKeyTypes(host: target.host, port: target.port) ?? [] where !types.contains(type) {
            types.append(type)
        }
        return types
    }

    /// Checks the host key against the store, then (for a host it does not know) OpenSSH's
    /// known_hosts files; says why the key is accepted, or throws before authentication.
    func verifyHostKey(_ key: SSHPublicKey, notes: inout [String]) throws(OCTunnelError) -> HostKeyTrust {
        let target = settings.target
        let store = KnownHostsStore(path: settings.knownHostsPath)
        if let expected = settings.expectFingerprint, expected != key.fingerprint {
            throw .hostKeyNotExpected(host: target.host, port: target.port, expected: expected, presented: key.fingerprint)
        }
        switch try store.verdict(host: target.host, port: target.port, key: key) {
        case .trusted:
            return .known
        case .changed(let known):
            throw .hostKeyChanged(host: target.host, port: target.port, known: known, presented: key.fingerprint, file: store.path)
        case .revoked:
            throw .hostKeyRevoked(host: target.host, port: target.port, presented: key.fingerprint, file: store.path)
        case .unknown:
            break
        }
        switch settings.openSSHKnownHosts?.verdict(host: target.host, port: target.port, key: key, notes: &notes) ?? .notFound {
        case .verified(let place):
            try store.record(host: target.host, port: target.port, key: key)
            return .openSSH(place)
        case .differs(let place, let known):
            let name = settings.openSSHKnownHosts?.lookupName(host: target.host, port: target.port) ?? target.hostPort.knownHostsName
            throw .hostKeyDiffersFromOpenSSH(host: target.host, port: target.port, presented: key.fingerprint, known: known,
                                             file: place.file, line: place.line, name: name)
        case .revoked(let place):
            throw .hostKeyRevoked(host: target.host, port: target.port, presented: key.fingerprint, file: "\(place.file) line \(place.line)")
        case .otherTypes(let known):
            guard settings.strictHostKeyChecking.acceptsNewKeyType || settings.expectFingerprint != nil else {
                try refuseUnknownHost(key)
                throw .hostKeyTypeUnknownToOpenSSH(host: target.host, port: target.port, presentedType: key.type,
                                                   presented: key.fingerprint, known: known.map(\.description))
            }
            try refuseUnknownHost(key)
            try store.record(host: target.host, port: target.port, key: key)
            return .firstUse
        case .notFound:
            try refuseUnknownHost(key)
            try store.record(host: target.host, port: target.port, key: key)
            return .firstUse
        }
    }

    /// Throws unless a host no file knows may be trusted now: `--expect-fingerprint` (already
    /// compared) always may; `--no-trust-new` and StrictHostKeyChecking `yes` refuse it.
    private func refuseUnknownHost(_ key: SSHPublicKey) throws(OCTunnelError) {
        let target = settings.target
        guard settings.expectFingerprint == nil else { return }
        guard settings.trustNew else {
            throw .unknownHostRefused(host: target.host, port: target.port, presented: key.fingerprint)
        }
        guard settings.strictHostKeyChecking.acceptsUnknownHost else {
            throw .unknownHostRefusedByStrictChecking(host: target.host, port: target.port, presented: key.fingerprint)
        }
    }
}
