import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A session's end is a value until it is printed; printed, it reads as it always has (users
/// and the end-to-end tests read these lines).
@Suite("SessionEnd: the words each end prints, and what each end leads to", .ownThreads)
struct SessionEndTests {
    @Test("each end prints the line it printed as a string")
    func texts() {
        let cases: [(SessionEnd, String)] = [
            (.silence(seconds: 46), "no answer from the VPS for 46 s (keepalive)"),
            (
                .unansweredProbe(seconds: 1.04, after: .clientAfterSilence(20)),
                "no answer to a probe within 1.0 s after a client after a silence"
            ),
            (.unansweredProbe(seconds: 1.24, after: nil), "no answer to a probe within 1.2 s after a network change"),
            (.sendFailed("Connection reset by peer"), "connection to VPS lost (send: Connection reset by peer)"),
            (.vpsClosed(code: -13, message: "socket disconnect"), "connection to VPS lost (socket disconnect)"),
            (.vpsClosed(code: -43, message: ""), "connection to VPS lost (libssh2 error -43)"),
            (
                .roamed(.wake(12), .addressGone("10.0.0.1")),
                "woke after 12.0 s asleep: the session's address 10.0.0.1 is gone"
            ),
            (.roamed(.requested, .requested), "reconnect requested: reconnect requested"),
            (.requestFailed("listen: refused (libssh2 error -32)"), "listen: refused (libssh2 error -32)"),
            (.replaced, "replaced by a new session"),
            (.stopped, "octunnel stopped"),
            (.stillClosedBeforeGreeting, "still closed before its SSH greeting (see above)"),
        ]
        for (end, line) in cases {
            #expect(end.text == line)
            #expect("\(end)" == line)
        }
        let error = ConnectError.connectTimeout(host: "vps", port: 22, seconds: 10)
        #expect(SessionEnd.attemptFailed(AnyFailure(error)).text == error.localizedDescription)
    }

    @Test("disconnected and stopping print the end's line, as text and as JSON")
    func events() throws {
        let end = SessionEnd.silence(seconds: 46)
        #expect(
            EngineEvent.disconnected(reason: end, retryIn: 1.04).text
                == "disconnected: no answer from the VPS for 46 s (keepalive); retrying in 1.0 s")
        let object = EngineEvent.disconnected(reason: end, retryIn: 1.04).jsonObject
        #expect(object["reason"] as? String == end.text)
        #expect(object["retryIn"] as? Double == 1.0)
        #expect(EngineEvent.stopping(reason: .stopped).text == "stopping: octunnel stopped")
        #expect(EngineEvent.stopping(reason: .stopped).jsonObject["reason"] as? String == "octunnel stopped")
    }

    @Test("roaming ends start the next attempt at once; a clean stop tells connections nothing")
    func consequences() {
        #expect(SessionEnd.roamed(.requested, .requested).retriesAtOnce)
        #expect(SessionEnd.unansweredProbe(seconds: 1, after: nil).retriesAtOnce)
        #expect(!SessionEnd.silence(seconds: 46).retriesAtOnce)
        #expect(!SessionEnd.sendFailed("x").retriesAtOnce)
        #expect(SessionEnd.stopped.connectionNotice == nil)
        #expect(SessionEnd.attemptFailed(AnyFailure(KeyError.noKey(path: "k"))).connectionNotice == "tunnel stopped")
    }
}
