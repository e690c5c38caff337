import Foundation

/// OpenCode's events as the stand-in's `POST /standin/emit` takes them (a `type` and its `fields`), for the
/// tests that play an agent's session through it.
public enum StandInEvent {
    /// An event of `type` about session `id`, `fields` beside its sessionID.
    public static func session(_ id: String, _ type: String, _ fields: [String: Any] = [:]) -> [String: Any] {
        ["type": type, "fields": fields.merging(["sessionID": id]) { $1 }]
    }

    /// 1.x's session.status of session `id`, `type` "busy" or "idle".
    public static func status(_ id: String, _ type: String) -> [String: Any] {
        session(id, "session.status", ["status": ["type": type]])
    }

    /// session.error of session `id`: the error's `name` and its `message`.
    public static func failure(_ id: String, _ message: String, name: String = "APIError") -> [String: Any] {
        session(id, "session.error", ["error": ["name": name, "data": ["message": message]]])
    }

    /// Session `id`, named `title` (in `directory` when given), working and then done: session.updated, busy, idle
    /// and the deprecated session.idle after it, as 1.x sends them.
    public static func finish(_ id: String, title: String, directory: String? = nil) -> [[String: Any]] {
        var info: [String: Any] = ["id": id, "title": title]
        if let directory { info["directory"] = directory }
        return [
            session(id, "session.updated", ["info": info]), status(id, "busy"), status(id, "idle"),
            session(id, "session.idle"),
        ]
    }

    /// A harmless event every open stream gets (server.ping): the stand-in's answer counts the streams.
    public static var ping: [String: Any] { ["type": "server.ping", "fields": [String: Any]()] }
}

extension OpenCodeStandIn {
    /// Adds a pending question of `session` through the test route (`POST /standin/question`), its options
    /// `labels` (each described "about LABEL"): its id and how many event streams got its event; nil if refused.
    public func askQuestion(
        session: String, _ question: String, header: String = "DB", labels: [String] = []
    ) -> (id: String, streams: Int)? {
        let options = labels.map { ["label": $0, "description": "about \($0)"] }
        let answer = post(
            "/standin/question",
            ["sessionID": session, "questions": [["question": question, "header": header, "options": options]]])
        guard answer.status == 200,
            let object = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
            let id = object["id"] as? String
        else { return nil }
        return (id, object["streams"] as? Int ?? -1)
    }

    /// The event streams open at the stand-in now: how many (-1 if it did not answer) and their peers (a new
    /// stream shows as a new peer).
    public func openStreams() -> (count: Int, peers: [String]) {
        let answer = post("/standin/emit", StandInEvent.ping)
        let object = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
        return (object?["streams"] as? Int ?? -1, object?["peers"] as? [String] ?? [])
    }

    /// Each reply the stand-in received, as "PATH BODY": a list a test compares whole.
    public var repliesSent: [String] {
        replies.map { "\($0["path"] as? String ?? "-") \($0["body"] as? String ?? "-")" }
    }

    /// Where a reply to the pending `kind` ("permission" or "question") `id` of `session` goes on a stand-in of
    /// `flavor`: 1.x's `/KIND/ID/reply`, 2.x's `/api/session/SESSION/KIND/ID/reply`.
    public static func replyPath(flavor: String, _ kind: String, _ id: String, session: String) -> String {
        flavor == "opencode1" ? "/\(kind)/\(id)/reply" : "/api/session/\(session)/\(kind)/\(id)/reply"
    }
}
