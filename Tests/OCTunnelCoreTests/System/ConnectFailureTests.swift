import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A connect's errno, as System/ names it: the errno is kept, so the engine tells an offline
/// machine (no route) from a VPS that is down; the words the user reads stay the same.
@Suite("System/: a connect's errno, kept in its failure", .ownThreads)
struct ConnectFailureTests {
    static func failure(_ code: Int32) -> SocketFailure {
        Sockets.connectFailure(Errno(rawValue: code), host: "vps", port: 22, timeout: 15)
    }

    @Test("ENETUNREACH and EADDRNOTAVAIL are no route; EHOSTUNREACH, refused and timed out are not")
    func mapping() {
        #expect(Self.failure(ECONNREFUSED) == .refused(host: "vps", port: 22))
        #expect(Self.failure(ETIMEDOUT) == .timedOut(host: "vps", port: 22, seconds: 15))
        for code in [ENETUNREACH, EADDRNOTAVAIL] {
            let failure = Self.failure(code)
            #expect(
                failure
                    == .unreachable(
                        host: "vps", port: 22, reason: Errno(rawValue: code).description, errno: Errno(rawValue: code)))
            #expect(failure.isNoRoute, "errno \(code)")
            #expect(
                failure.failure as? ConnectError
                    == .unreachable(host: "vps", port: 22, reason: Errno(rawValue: code).description, noRoute: true))
        }
        for code in [EHOSTUNREACH, ECONNRESET, ECONNREFUSED, ETIMEDOUT] {
            #expect(!Self.failure(code).isNoRoute, "errno \(code)")
        }
        let host = Self.failure(EHOSTUNREACH).failure
        #expect(
            host as? ConnectError == .unreachable(host: "vps", port: 22, reason: "No route to host", noRoute: false))
        #expect(host.localizedDescription == "cannot reach vps:22: No route to host.", "the words are as before")
    }
}
