import Foundation

/// What is needed to open an authenticated session to the VPS.
public struct ConnectionSettings: Sendable {
    public var target: SSHTarget
    /// A key file or the ssh-agent.
    public var authentication: Authentication
    /// A passphrase-protected key file, decrypted at start (`preparedForSignIn`).
    public var unlockedKey: UnlockedKey?
    public var knownHostsPath: String
    public var connectTimeout: Double
    public var expectFingerprint: String?
    public var trustNew: Bool
    /// The VPS end the least-privilege key line allows (OpenCode's), named only in the
    /// "key not authorized" message's suggested line: not a forward of the session.
    public var keyLineVPSEnd = HostPort(host: Defaults.remoteHost, port: Defaults.remotePort)
    /// OpenSSH's known_hosts files to consult for a host octunnel's store does not know;
    /// nil skips them (`--no-openssh-known-hosts`).
    public var openSSHKnownHosts: OpenSSHKnownHosts?
    /// The user's StrictHostKeyChecking for this host (`ask` when the ssh config says nothing).
    public var strictHostKeyChecking: StrictHostKeyChecking = .ask

    public init(
        target: SSHTarget, authentication: Authentication, knownHostsPath: String,
        connectTimeout: Double = Double(Defaults.connectTimeoutSeconds), expectFingerprint: String? = nil,
        trustNew: Bool = true
    ) {
        self.target = target
        self.authentication = authentication
        self.knownHostsPath = knownHostsPath
        self.connectTimeout = connectTimeout
        self.expectFingerprint = expectFingerprint
        self.trustNew = trustNew
    }
}
