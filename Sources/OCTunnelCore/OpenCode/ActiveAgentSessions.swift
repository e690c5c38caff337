import Foundation

/// The sessions OpenCode 2 says run now: `GET /api/session/active` →
/// `{"data": {sessionID: {"type": "running"}}, "watermarks": {sessionID: seq}}`
/// (packages/protocol/src/groups/session.ts `session.active`, packages/server/src/handlers/
/// session.ts: the foreground drains this process owns; a session absent is inactive).
public enum ActiveAgentSessions {
    /// The ids listed as running, kept as `AgentSessionWatch` keeps ids (redacted, cut); nil for a body
    /// past 1 MiB, of another shape, or naming more than `limit` sessions (a list cut short
    /// cannot say that a session is absent).
    public static func parse(
        _ body: [UInt8], limit: Int = AgentSessionWatch.sessionLimit, secrets: [String] = []
    ) -> Set<String>? {
        guard body.count <= 1 << 20, let data = decodeWire(DataEnvelope<[String: SessionStatusWire]>.self, body)?.data,
            data.count <= limit
        else { return nil }
        var running = Set<String>()
        for (id, state) in data where state.type != "idle" {
            running.insert(KeptText.kept(id, bytes: AgentSessionWatch.Limits.id, secrets: secrets))
        }
        return running
    }
}
