import Foundation

/// `octunnel push setup URL`: makes the topics (the one in the URL, or a random one; always a
/// random reply topic), checks the server is an ntfy server that answers and that the token
/// (if any) may read both topics, saves the settings for both ends of the profile, and says
/// how to subscribe.
public enum PushSetup {
    /// What setup made, and what to tell the user.
    public struct Outcome: Sendable {
        public let settings: PushSettings
        /// The address the phone subscribes to.
        public var subscribeAddress: String { settings.url.text() }
        /// Lines for stderr: what to do on the phone, and for a self-hosted server, for iOS.
        public let advice: [String]
    }

    /// Runs setup and saves; nothing is saved unless the server answered as ntfy and took the token.
    public static func run(
        url text: String, tokenFile: String?, caFile: String?, detail: PushDetail,
        directory: OctunnelDirectory, profile: ProfileName
    ) throws(PushError) -> Outcome {
        var url = try PushURL.parse(text)
        if url.topic == nil { url = url.with(topic: PushSettings.newTopic(prefix: "oc-")) }
        let token = try tokenFile.map { path throws(PushError) in try PushToken.read(path) }
        let settings = PushSettings(
            url: url, replyTopic: PushSettings.newTopic(prefix: "oc-reply-"), tokenFile: tokenFile,
            caFile: caFile, detail: detail)
        let http = PushHTTP(options: PushHTTPOptions(caFile: caFile))
        try checkHealth(url, http: http)
        for topic in [url, settings.replyURL] { try checkRead(topic, token: token, http: http) }
        try settings.save(directory: directory, profile: profile)
        return Outcome(settings: settings, advice: advice(for: settings))
    }

    /// `GET /v1/health` must answer `{"healthy":true}`, as ntfy does.
    static func checkHealth(_ url: PushURL, http: PushHTTP) throws(PushError) {
        let health = url.serverRoot
        let answer = try http.send(PushHTTPRequest(method: "GET", url: health).at("/v1/health"))
        guard answer.status == 200 else {
            throw .notNtfy(url: health.shown, detail: "GET /v1/health answered HTTP \(answer.status)")
        }
        struct Health: Decodable { let healthy: Bool }
        guard let decoded = try? JSONDecoder().decode(Health.self, from: Data(answer.body)) else {
            throw .notNtfy(url: health.shown, detail: "GET /v1/health answered no {\"healthy\":…}")
        }
        guard decoded.healthy else { throw .notNtfy(url: health.shown, detail: "it says it is not healthy") }
    }

    /// Reads `topic` once (`GET /TOPIC/json?poll=1&since=none`): 200 when the token (or anyone)
    /// may read it, 401/403 when not.
    static func checkRead(_ topic: PushURL, token: String?, http: PushHTTP) throws(PushError) {
        let answer = try http.send(
            PushHTTPRequest(method: "GET", url: topic, headers: PushToken.headers(token)).at("/json?poll=1&since=none"))
        try PushChannel.judge(answer, url: topic.serverRoot, hasToken: token != nil, secrets: [token].compactMap { $0 })
    }

    /// What the phone needs: the ntfy app, the address; a login for a server with access control;
    /// for iOS and a self-hosted server, `upstream-base-url`.
    static func advice(for settings: PushSettings) -> [String] {
        var lines = [
            "On the phone: install the ntfy app, then subscribe to this address (scan the code below, or type it):",
            "  server \(settings.url.server), topic \(settings.url.topic ?? "")",
        ]
        if settings.tokenFile != nil {
            lines.append(
                "The server has access control: in the app, add the server as a user (Settings, Manage users) that may read this topic."
            )
        }
        if settings.url.host != "ntfy.sh" {
            lines.append(
                "For an iPhone: Apple's push reaches a self-hosted server only through ntfy.sh; "
                    + "set `upstream-base-url: \"https://ntfy.sh\"` in the server's server.yml (and restart ntfy)."
            )
        }
        lines.append(
            "Whoever knows the topic can read these pushes and answer them: keep the address to yourself (docs/security.md)."
        )
        lines.append("Then: `octunnel push test` sends one push with a button, and says when its tap came back.")
        return lines
    }
}

/// `octunnel push test`: one push with one working button, then the wait for its tap.
public enum PushTest {
    /// Sends the test push and waits (at most `wait` seconds) for its button's tap on the reply
    /// topic; returns the seconds the round trip took. `report` gets what the listener says.
    public static func run(
        settings: PushSettings, token: String?, wait: Double,
        report: @escaping @Sendable (String) -> Void
    ) throws(PushError) -> Double {
        let channel = PushChannel(settings: settings, token: token, secrets: [])
        let tapped = DispatchSemaphore(value: 0)
        let listener = channel.listener(
            answer: { _, _, _ in tapped.signal() },
            report: { line in
                if !line.contains(" from the phone") { report(line) }
            })
        listener.start()
        defer { listener.stop() }
        guard listener.waitUntilOpen(timeout: min(wait, 15)) else {
            throw .transport(url: settings.url.shown, detail: "the reply topic could not be read")
        }
        let requestID = "octunnel-test-" + PushSettings.newTopic(prefix: "").prefix(8)
        let nonce = channel.book.issue(requestID: requestID, directory: nil, answers: [.permission(.once)])[0]
        let tap = PushTap(requestID: requestID, nonce: nonce, sender: channel.book.sender)
        let started = Date()
        try channel.send(
            NtfyMessage(
                topic: settings.url.topic ?? "", title: "octunnel: test push",
                message: "Tap the button: octunnel reads the tap back on the home machine.", priority: 3,
                tags: ["bell"], actions: [channel.button("It works", tap)]))
        guard tapped.wait(timeout: .now() + wait) == .success else { throw .notTapped(seconds: Int(wait)) }
        return Date().timeIntervalSince(started)
    }
}
