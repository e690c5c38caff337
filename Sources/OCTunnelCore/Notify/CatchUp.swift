import Foundation

/// What OpenCode's lists say happened while nobody followed its event stream (issue 48), asked
/// through the tunnel as the stream connects (the first time too) and turned into moments by
/// `AgentSessionWatch`: the permissions and questions still pending (both generations, in OpenCode's
/// own directory and each one a session was seen in), and the turns that ended meanwhile (1.x:
/// sessions seen working that `GET /session/status` no longer lists; 2.x: `GET
/// /api/session/active`, then the durable log of each session seen working that no longer
/// runs, at most `logLimit` of them).
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
    var logLimit = 8

    /// The moments of what the cut hid, told once by `watch`; `failed` is said when the pending
    /// lists cannot be had (the rest is skipped quietly: the stream goes on).
    func moments(_ watch: inout AgentSessionWatch, failed: (String) -> Void) -> [AgentMoment] {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var client = PermissionClient(host: host, port: port, credentials: credentials, timeout: seconds)
        client.deadline = deadline
        let directories = watch.directories()
        var generation = OpenCodeGeneration.one
        var moments: [AgentMoment] = []
        do {
            var (found, pending) = try client.list()
            generation = found
            if !directories.isEmpty { pending.append(try client.list(directories: directories).list) }
            moments += watch.caughtUp(pending)
        } catch {
            failed(error.localizedDescription)
        }
        switch generation {
        case .one: moments += watch.caughtUp(working: statuses(of: [nil] + directories.map(Optional.some), watch: watch, until: deadline))
        case .two: moments += endedTurns(&watch, until: deadline)
        }
        return moments
    }

    /// 1.x: the working sessions of each directory (`GET /session/status`); a directory that does
    /// not answer in time is left out, and none of its sessions is judged.
    private func statuses(of directories: [String?], watch: AgentSessionWatch, until deadline: Date) -> [String?: Set<String>] {
        var working: [String?: Set<String>] = [:]
        for directory in directories where deadline.timeIntervalSinceNow > 0 {
            guard let (head, body) = try? probe(deadline).get("/session/status", headers: PermissionClient.directoryHeaders(directory), limit: 1 << 20),
                  head.status == 200, let listed = watch.working(in: body) else { continue }
            working[directory] = listed
        }
        return working
    }

    /// 2.x: the turns that ended meanwhile, from the active list and the logs of the sessions it
    /// no longer lists; nothing when the active list cannot be had.
    private func endedTurns(_ watch: inout AgentSessionWatch, until deadline: Date) -> [AgentMoment] {
        guard let (head, body) = try? probe(deadline).get("/api/session/active", headers: [], limit: 1 << 20 + 1), head.status == 200,
              let active = ActiveAgentSessions.parse(body, secrets: credentials.secrets) else { return [] }
        var logs: [String: AgentSessionLog] = [:]
        for (session, after) in watch.logsToRead(active: active, limit: logLimit) where deadline.timeIntervalSinceNow > 0 {
            let path = "/api/session/\(session)/log" + (after.map { "?after=\($0)" } ?? "")
            guard let (head, body) = try? probe(deadline).get(path, headers: [], limit: 1 << 20 + 1), head.status == 200,
                  let read = AgentSessionLog.parse(body, session: session, secrets: credentials.secrets) else { continue }
            logs[session] = read
        }
        return watch.caughtUp(active: active, logs: logs)
    }

    private func probe(_ deadline: Date) -> HTTPProbe {
        HTTPProbe(host: host, port: port, deadline: deadline, authorization: credentials.authorization, secrets: credentials.secrets)
    }
}
