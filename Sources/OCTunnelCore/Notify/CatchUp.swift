import Foundation

/// What OpenCode's lists say happened while nobody followed its event stream (issue 48), asked
/// through the tunnel as the stream connects (the first time too) and turned into moments by
/// `AgentSessionWatch`: the permissions and questions still pending (every generation, in OpenCode's
/// own directory and each one a session was seen in), and the turns that ended meanwhile, as the
/// generation asks for them (`OpenCodeDialect.endedTurns`: 1.x's `GET /session/status`, 2.x's
/// active list and session logs, at most `logLimit` of them).
///
/// All of it shares one deadline (`seconds`): a home that never answers holds the follower's
/// thread that long at most, however many directories and sessions there are to ask.
struct CatchUp {
    let host: String
    let port: Int
    let credentials: OpenCodeCredentials
    /// The whole catch-up's time, every request included.
    var seconds = 10.0
    /// Session logs read at most per catch-up (2.x).
    static let logLimit = 8
    /// The generations to try (`PermissionClient.generations`).
    var generations = OpenCodeGeneration.known

    /// The moments of what the cut hid, told once by `watch`; `failed` is said when the pending
    /// lists cannot be had (the rest is skipped quietly: the stream goes on).
    func moments(_ watch: inout AgentSessionWatch, failed: (String) -> Void) -> [AgentMoment] {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var client = PermissionClient(host: host, port: port, credentials: credentials, timeout: seconds)
        client.deadline = deadline
        client.generations = generations
        let directories = watch.directories()
        var generation = generations[0]
        var moments: [AgentMoment] = []
        do {
            var (found, pending) = try client.list()
            generation = found
            if !directories.isEmpty { pending.append(try client.list(directories: directories).list) }
            moments += watch.caughtUp(pending)
        } catch {
            failed(error.localizedDescription)
        }
        return moments + generation.api.endedTurns(&watch, directories: directories, read: read(until: deadline))
    }

    /// GETs through the tunnel until `deadline`: a 200's body, else nil.
    private func read(until deadline: Date) -> OpenCodeRead {
        let (host, port, credentials) = (host, port, credentials)
        return OpenCodeRead(secrets: credentials.secrets, timeLeft: { deadline.timeIntervalSinceNow > 0 }) {
            path, directory in
            let probe = HTTPProbe(
                host: host, port: port, deadline: deadline, authorization: credentials.authorization,
                secrets: credentials.secrets)
            guard
                let (head, body) = try? probe.get(
                    path, headers: PermissionClient.directoryHeaders(directory), limit: 1 << 20 + 1),
                head.status == 200
            else { return nil }
            return body
        }
    }
}
