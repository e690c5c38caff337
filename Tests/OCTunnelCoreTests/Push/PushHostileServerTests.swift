import Foundation
import OCTunnelTestSupport
import Testing

@testable import OCTunnelCore

#if canImport(Glibc)
    import Glibc
#endif

/// A push server that never answers, or answers without end, never stalls whoever pushes or
/// listens: requests time out, answers and lines are cut at their bounds, and the reply
/// listener stops promptly whatever the stream is doing.
@Suite("the push against silent and endless servers", .timeLimit(.minutes(2)), .ownThreads)
struct PushHostileServerTests {
    /// A loopback socket that listens and never accepts: connections complete, nothing answers.
    final class SilentServer {
        let fd: Int32
        let port: Int
        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0, listen(fd, 16) == 0 else {
                close(fd)
                throw HarnessError("cannot listen: \(String(cString: strerror(errno)))")
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            port = Int(UInt16(bigEndian: address.sin_port))
        }
        deinit { close(fd) }
    }

    @Test("a server that never answers: a push times out at its bound; the listener stops within a second")
    func silent() throws {
        let server = try SilentServer()
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
