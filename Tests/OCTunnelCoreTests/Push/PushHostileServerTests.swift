import Foundation
import OCTunnelTestSupport
import Testing

@testable import OCTunnelCore

/// A push server that never answers, or answers without end, never stalls whoever pushes or
/// listens: requests time out, answers and lines are cut at their bounds, and the reply
/// listener stops promptly whatever the stream is doing.
@Suite("the push against silent and endless servers", .timeLimit(.minutes(2)), .ownThreads)
struct PushHostileServerTests {
    @Test("a server that never answers: a push times out at its bound; the listener stops within a second")
    func silent() throws {
        // Connections complete and are held open; nothing is ever answered.
        let server = try TCPTestServer { fd in _ = readAll(fd) }
        defer { server.stop() }
        let url = try PushURL.parse("http://127.0.0.1:\(server.port)/oc-t")
        var options = PushHTTPOptions()
        options.timeout = 1
        let started = Date()
        #expect(throws: PushError.timedOut(url: url.shown)) {
            try PushHTTP(options: options).send(PushHTTPRequest(method: "POST", url: url, body: [1]))
        }
        #expect(Date().timeIntervalSince(started) < 5)

        let settings = PushSettings(url: url, replyTopic: "oc-reply-t")
        let channel = PushChannel(settings: settings, token: nil, secrets: [])
        let listener = channel.listener(answer: { _, _, _ in }, report: { _ in })
        listener.start()
        // Let it connect and sit in its read (nothing will come).
        #expect(!listener.waitUntilOpen(timeout: 1))
        let stopping = Date()
        listener.stop()
        let took = Date().timeIntervalSince(stopping)
        #expect(took < 1, "stop took \(took) s")
    }

    @Test(
        "a server that answers without end: the answer is cut at 64 KiB, a stream's line at 32 KiB, and stop is prompt")
    func endless() throws {
        let server = try HostileHTTPServer(mode: "endless-chunk")
        defer { server.stop() }
        let url = try PushURL.parse("http://127.0.0.1:\(server.port)/oc-t")
        #expect(throws: PushError.answerTooLarge(url: url.shown, limit: 64 * 1024)) {
            try PushHTTP().send(PushHTTPRequest(method: "GET", url: url))
        }
        let said = Locked<[String]>([])
        let listener = PushChannel(settings: PushSettings(url: url, replyTopic: "oc-reply-t"), token: nil, secrets: [])
            .listener(answer: { _, _, _ in }, report: { line in said.update { $0.append(line) } })
        listener.start()
        #expect(waitUntil(timeout: 20) { said.value.contains { $0.contains("more than 32768 bytes") } })
        let stopping = Date()
        listener.stop()
        #expect(Date().timeIntervalSince(stopping) < 1)
    }
}
