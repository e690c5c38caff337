import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Notifications over a session that is cut twice (issue 40's goal): 50 of OpenCode's events,
/// the VPS restarted after the first part and the laptop moved (its address gone, a new link up)
/// after the second, each part sent once `tunnel up`'s event stream is back. Every moment is told
/// exactly once: none lost (a session busy before a cut that goes idle after it is finished),
/// none doubled (a permission or an error sent again after a cut is not told again).
@Suite("notifications across a VPS restart and a network move", .ownThreads, .timeLimit(.minutes(6)))
struct NotifyContinuityTests {
    /// One event as POST /standin/emit takes it (JSON).
    typealias Event = String

    static func session(_ id: String, _ type: String, _ fields: [String: Any] = [:]) -> Event {
        json(["type": type, "fields": fields.merging(["sessionID": id]) { $1 }])
    }
    static func json(_ object: [String: Any]) -> String {
        String(
            decoding: (try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys)) ?? Data(),
            as: UTF8.self)
    }
    static let ping = json(["type": "server.ping", "fields": [:]])
    static func status(_ id: String, _ type: String) -> Event {
        session(id, "session.status", ["status": ["type": type]])
    }
    static func titled(_ id: String, _ title: String, parent: String? = nil) -> Event {
        var info: [String: Any] = ["id": id, "title": title]
        if let parent { info["parentID"] = parent }
        return session(id, "session.updated", ["info": info])
    }
    static func asked(_ id: String, _ request: String) -> Event {
        session(id, "permission.asked", ["id": request, "permission": "bash", "patterns": ["make \(request)"]])
    }
    static func question(_ id: String, _ request: String) -> Event {
        session(
            id, "question.asked",
            [
                "id": request,
                "questions": [["question": "Which port for \(request)?", "header": "Port", "options": []]],
            ])
    }
    static func error(_ id: String, _ name: String, _ message: String) -> Event {
        session(id, "session.error", ["error": ["name": name, "data": ["message": message]]])
    }
    static func tool(_ id: String, _ call: String, _ state: String) -> Event {
        session(
            id, "message.part.updated",
            ["part": ["sessionID": id, "type": "tool", "callID": call, "state": ["status": state]]])
    }

    /// The three parts: the events, and the moments ("kind sessionID") they make.
    static let parts: [(events: [Event], moments: [String])] = [
        (
            [
                titled("a1", "Checkout page"), status("a1", "busy"), asked("a1", "p-a1"), tool("a1", "t1", "running"),
                tool("a1", "t1", "completed"),
                status("a1", "idle"), titled("a2", "Search"), status("a2", "busy"),
                error("a2", "APIError", "rate limited"), titled("a3", "Payments"),
                status("a3", "busy"), status("a4", "busy"), asked("a4", "p-a4"), status("a4", "idle"),
                session("a4", "session.idle"),
                question("a5", "q-a5"), status("a6", "busy"),
            ],
            ["permission a1", "finished a1", "failed a2", "permission a4", "finished a4", "permission a5"]
        ),
        // After the VPS restart: a3 and a6 were busy before it; a1's and a4's requests and a2's error come again.
        (
            [
                status("a3", "idle"), session("a3", "session.idle"), asked("a1", "p-a1"), asked("a4", "p-a4"),
                titled("b1", "Dark mode"),
                status("b1", "busy"), tool("b1", "t2", "running"), status("b1", "idle"), tool("b1", "t2", "completed"),
                status("b1", "idle"),
                error("b2", "ProviderAuthError", "key expired"), error("b2", "ProviderAuthError", "key expired"),
                status("b3", "busy"),
                asked("b3", "p-b3"), status("a6", "idle"), error("a2", "APIError", "rate limited"),
                status("b4", "busy"),
            ],
            ["finished a3", "finished b1", "failed b2", "permission b3", "finished a6"]
        ),
        // After the move: b4 was busy before it; b3's request comes again; c3 is a subagent; c4's abort is no failure.
        (
            [
                status("b4", "idle"), asked("b3", "p-b3"), titled("c1", "Login"), status("c1", "busy"),
                asked("c1", "p-c1"), status("c1", "idle"),
                session("c1", "session.idle"), status("c2", "busy"), error("c2", "UnknownError", "disk full"),
                titled("c3", "Explore", parent: "c1"),
                status("c3", "busy"), status("c3", "idle"), status("c4", "busy"),
                session("c4", "message.part.delta", ["delta": "done"]),
                status("c4", "idle"), question("c4", "q-c4"),
            ],
            ["finished b4", "permission c1", "finished c1", "failed c2", "permission c4", "finished c4"]
        ),
    ]

    @Test(
        "50 events, the VPS restarted and the laptop moved between them: every moment told once, none lost, none doubled"
    )
    func fiftyEventsTwoCuts() async throws {
        #expect(Self.parts.map(\.events.count).reduce(0, +) == 50)
        let setup = try await RoamingTests.laptopAndVPS("notify50")
        defer { setup.stop() }
        let (tunnel, launcher, port) = (setup.tunnel, setup.net.exec(.server), setup.backend.port)
        var seen = Set<String>()
        var told = 0
        for (index, part) in Self.parts.enumerated() {
            // The follower's stream is back: a stream from a peer not seen before (a stale one
            // from before the move may linger at the VPS, counted but never read again).
            let before = seen
            let fresh = try await offPool { () -> Set<String>? in
                var peers = Set<String>()
                let back = waitUntil(timeout: 60) {
                    peers = Set(Self.emit(Self.ping, port: port, launcher: launcher)?.peers ?? [])
                    return !peers.subtracting(before).isEmpty
                }
                return back ? peers : nil
            }
            let peers = try #require(
                fresh, "part \(index + 1): tunnel up's event stream did not come back: \(tunnel.stdout.suffix(10))")
            seen.formUnion(peers)
            for event in part.events {
                let reached = try await offPool { Self.emit(event, port: port, launcher: launcher)?.streams ?? 0 }
                #expect(reached >= 1, "part \(index + 1): \(event) reached no stream")
            }
            told += part.moments.count
            let expected = told
            let moments = try await offPool { () -> [String] in
                _ = waitUntil(timeout: 30) { Self.moments(tunnel).count >= expected }
                return Self.moments(tunnel)
            }
            #expect(moments.count == expected, "after part \(index + 1): \(moments)")
            #expect(
                Array(moments.suffix(part.moments.count)).sorted() == part.moments.sorted(),
                "part \(index + 1): \(moments)")
            switch index {
            case 0:
                try await offPool { try setup.fixture.sshd.restart() }
            case 1:
                try await offPool { try setup.move.move() }
            default:
                break
            }
        }
        // Nothing more comes (a doubled moment would have come with its part).
        let all = Self.parts.flatMap(\.moments)
        let final = try await offPool { () -> [String] in
            _ = waitUntil(timeout: 2) { Self.moments(tunnel).count > all.count }
            return Self.moments(tunnel)
        }
        #expect(final.sorted() == all.sorted(), "\(final)")
        #expect(Set(final).count == final.count, "a moment told twice: \(final)")
        #expect(try RoamingTests.status(setup.fixture)["reconnects"] as? Int == 2, "\(tunnel.stdout.suffix(10))")
    }

    /// `tunnel up --json`'s notification events so far, as "kind sessionID".
    static func moments(_ tunnel: RunningProcess) -> [String] {
        tunnel.stdout.compactMap { line in
            guard line.contains("\"notification\""),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["event"] as? String == "notification"
            else { return nil }
            return "\(object["kind"] as? String ?? "?") \(object["sessionID"] as? String ?? "?")"
        }
    }

    /// POSTs `event` to the stand-in's test route from inside the VPS's namespace; how many
    /// streams got it and their peers.
    static func emit(_ event: Event, port: Int, launcher: [String]) -> (streams: Int, peers: [String])? {
        let script = """
            import sys, urllib.request
            request = urllib.request.Request("http://127.0.0.1:" + sys.argv[1] + "/standin/emit", data=sys.argv[2].encode(), method="POST")
            print(urllib.request.urlopen(request, timeout=10).read().decode())
            """
        let command = launcher + ["/usr/bin/python3", "-c", script, String(port), event]
        guard let result = try? run(command[0], Array(command.dropFirst())), result.status == 0,
            let answer = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else { return nil }
        return (answer["streams"] as? Int ?? 0, answer["peers"] as? [String] ?? [])
    }
}
