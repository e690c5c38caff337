import Foundation

/// OpenCode as the running `tunnel up` (else `home up`) of a profile reaches it: the local port
/// (home: OpenCode's own) its status socket reports, and the password it would use
/// (`--password-file`, else the saved one, else `OPENCODE_PASSWORD`, as `OpenCodeCredentials.load`).
public enum TunnelOpenCode {
    /// A `PermissionClient` through the running tunnel, else (none runs on this machine) to
    /// OpenCode as the running `home up` of `profile` reaches it: `octunnel permission` answers at
    /// home too, as its notification line says. Throws `notRunning` (exit 3, the tunnel's) when
    /// neither runs.
    public static func permissionClient(
        directory: OctunnelDirectory, profile: ProfileName, passwordFile: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        timeout: Double = 10
    ) throws -> PermissionClient {
        let snapshot: StatusSnapshot
        var role = Role.tunnel
        do {
            snapshot = try StatusClient(endpoint: StatusEndpoint(directory: directory, role: .tunnel, profile: profile))
                .query()
        } catch {
            let atHome = StatusClient(endpoint: StatusEndpoint(directory: directory, role: .home, profile: profile))
            guard case StatusError.notRunning = error, let found = try? atHome.query() else { throw error }
            (snapshot, role) = (found, .home)
        }
        guard let local = snapshot.local else {
            throw StatusError.notRunning(
                role: role, profile: profile,
                detail: "the running \(role) side (pid \(snapshot.pid)) reports no local port yet")
        }
        let sections = passwordFile == nil ? try SavedSettings.load(from: directory, profile: profile) : nil
        let saved = role == .tunnel ? sections?.tunnel?.passwordFile : sections?.home?.passwordFile
        let credentials = try OpenCodeCredentials.load(
            passwordFile: passwordFile, savedPasswordFile: saved, environment: environment)
        let host = ["0.0.0.0": "127.0.0.1", "::": "::1"][local.host] ?? local.host
        return PermissionClient(host: host, port: local.port, credentials: credentials, timeout: timeout)
    }
}
