import Foundation

/// OpenCode as the running `tunnel up` of a profile reaches it: the local port its status
/// socket reports, and the password `tunnel up` would use (`--password-file`, else the saved
/// one, else `OPENCODE_PASSWORD`, as `OpenCodeCredentials.load`).
public enum TunnelOpenCode {
    /// A `PermissionClient` through the running tunnel. Throws `notRunning` (exit 3) when no
    /// `tunnel up` of `profile` runs.
    public static func permissionClient(home: OctunnelDirectory, profile: ProfileName, passwordFile: String?,
                                        environment: [String: String] = ProcessInfo.processInfo.environment,
                                        timeout: Double = 10) throws(OCTunnelError) -> PermissionClient {
        let endpoint = StatusEndpoint(home: home, role: .tunnel, profile: profile)
        let snapshot = try StatusClient(endpoint: endpoint).query()
        guard let local = snapshot.local else {
            throw .notRunning(role: .tunnel, profile: profile, detail: "the running tunnel (pid \(snapshot.pid)) reports no local port yet")
        }
        let saved = passwordFile == nil ? try SavedSettings.load(from: home, profile: profile)?.tunnel?.passwordFile : nil
        let credentials = try OpenCodeCredentials.load(passwordFile: passwordFile, savedPasswordFile: saved, environment: environment)
        let host = ["0.0.0.0": "127.0.0.1", "::": "::1"][local.host] ?? local.host
        return PermissionClient(host: host, port: local.port, credentials: credentials, timeout: timeout)
    }
}
