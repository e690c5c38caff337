import Foundation

/// A scripted phone: reads a topic as ntfy's app does and performs a message's `http` action as
/// the app does on a tap (the action's method, default POST; its URL; its headers; its body,
/// default empty). It reaches nothing but the ntfy server, through this machine's curl.
public struct NtfyPhone: Sendable {
    public let topicURL: String
    public let token: String?
    public let caFile: String?

    public init(topicURL: String, token: String? = nil, caFile: String? = nil) {
        (self.topicURL, self.token, self.caFile) = (topicURL, token, caFile)
    }

    /// Every message the topic holds, oldest first (`GET /TOPIC/json?poll=1&since=all`).
    public func messages() throws -> [[String: Any]] {
        let result = try run("/usr/bin/curl", common + ["\(topicURL)/json?poll=1&since=all"])
        guard result.status == 0 else { throw HarnessError("curl poll failed: \(result)") }
        return result.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.filter { $0["event"] as? String == "message" }
    }

    /// Waits until the topic holds at least `count` messages; returns them.
    public func waitForMessages(_ count: Int, timeout: Double = 20) throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        _ = waitUntil(timeout: timeout) {
            found = (try? messages()) ?? []
            return found.count >= count
        }
        guard found.count >= count else { throw HarnessError("the topic holds \(found.count) messages, not \(count)") }
        return found
    }

    /// The message's actions.
    public static func actions(_ message: [String: Any]) -> [[String: Any]] {
        (message["actions"] as? [[String: Any]]) ?? []
    }

    /// Taps `action` as the app does; returns the HTTP status the server answered.
    @discardableResult
    public func tap(_ action: [String: Any]) throws -> Int {
        guard action["action"] as? String == "http", let url = action["url"] as? String else {
            throw HarnessError("not an http action: \(action)")
        }
        let method = (action["method"] as? String) ?? "POST"
        let headers = ((action["headers"] as? [String: String]) ?? [:]).sorted { $0.key < $1.key }.flatMap {
            ["-H", "\($0.key): \($0.value)"]
        }
        var arguments = ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", method] + headers
        arguments += ["--data-binary", (action["body"] as? String) ?? ""]
        if let caFile { arguments += ["--cacert", caFile] }
        let result = try run("/usr/bin/curl", arguments + [url])
        return Int(result.stdout) ?? 0
    }

    private var common: [String] {
        ["-sS", "--max-time", "10"] + (token.map { ["-H", "Authorization: Bearer \($0)"] } ?? [])
            + (caFile.map { ["--cacert", $0] } ?? [])
    }
}
