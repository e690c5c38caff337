import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Each room's error carries its own words, code and layer (issue 57); where one is boxed
/// (`AnyFailure`: a failed attempt, a push's settings) it is still the same failure to the rules
/// that read it: the engine's outage probe, the penalty it waits out, equality.
@Suite("OCTunnelFailure: one protocol for every room's error, boxed or not", .ownThreads)
struct OCTunnelFailureTests {
    static let refused = ConnectError.connectionRefused(host: "vps", port: 22)
    static let penalty = ConnectError.closedBeforeGreeting(host: "vps", port: 22)
    static let hostKey = TrustError.hostKeyRevoked(host: "vps", port: 22, presented: "SHA256:b", file: "kh")

    @Test("a boxed failure is the same failure: equal to its box, unboxed once, whatever the nesting")
    func boxing() {
        #expect(AnyFailure(Self.refused) == AnyFailure(ConnectError.connectionRefused(host: "vps", port: 22)))
        #expect(AnyFailure(Self.refused) != AnyFailure(ConnectError.connectionRefused(host: "vps", port: 2222)))
        #expect(AnyFailure(Self.refused) != AnyFailure(Self.penalty))
        #expect(AnyFailure(Self.hostKey) != AnyFailure(Self.refused))
        #expect(AnyFailure(AnyFailure(Self.refused)).base is ConnectError)
        #expect(AnyFailure(Self.refused).isSame(as: Self.refused) && Self.refused.isSame(as: AnyFailure(Self.refused)))
        #expect(!Self.refused.isSame(as: Self.penalty))
        let boxed = AnyFailure(Self.hostKey)
        #expect(boxed.errorDescription == Self.hostKey.errorDescription)
        #expect(boxed.exitStatus == .hostKeyChanged && boxed.layer == "host key")
    }

    @Test("the engine's rules read through the box: reached no server, a penalty that passes, fatal on reconnect")
    func rulesThroughTheBox() {
        for failure in [Self.refused, AnyFailure(Self.refused)] as [any OCTunnelFailure] {
            #expect(OutageProbe.reachedNoServer(failure))
            #expect(!failure.passesByItself && !failure.isFatalOnReconnect)
        }
        for failure in [Self.penalty, AnyFailure(Self.penalty)] as [any OCTunnelFailure] {
            #expect(!OutageProbe.reachedNoServer(failure))
            #expect(failure.passesByItself)
        }
        #expect(AnyFailure(Self.hostKey).isFatalOnReconnect)
        #expect(!OutageProbe.reachedNoServer(AnyFailure(Self.hostKey)))
    }

    @Test("the system layer's socket failures are worded by the rooms that meet them: connect and listen")
    func socketFailures() {
        let cases: [(SocketFailure, any OCTunnelFailure, String)] = [
            (
                .cannotResolve(host: "vps", reason: "no such host"),
                ConnectError.cannotResolve(host: "vps", reason: "no such host"), "resolve"
            ),
            (.refused(host: "vps", port: 22), Self.refused, "tcp"),
            (
                .timedOut(host: "vps", port: 22, seconds: 15),
                ConnectError.connectTimeout(host: "vps", port: 22, seconds: 15), "tcp"
            ),
            (
                .unreachable(host: "vps", port: 22, reason: "no route", errno: Errno(rawValue: EHOSTUNREACH)),
                ConnectError.unreachable(host: "vps", port: 22, reason: "no route"), "tcp"
            ),
            (
                .portInUse(bind: "127.0.0.1", port: 4096), ForwardError.localPortInUse(bind: "127.0.0.1", port: 4096),
                "local port"
            ),
            (
                .cannotListen(bind: "::1", port: 1, reason: "denied"),
                ForwardError.cannotListen(bind: "::1", port: 1, reason: "denied"), "local port"
            ),
        ]
        for (socket, expected, layer) in cases {
            #expect(socket.failure.isSame(as: expected), "\(socket)")
            #expect(socket.failure.layer == layer && socket.failure.exitStatus == .unavailable)
        }
        #expect(throws: ConnectError.connectionRefused(host: "vps", port: 22)) {
            try SocketFailure.thrownAsFailure { () throws(SocketFailure) in throw .refused(host: "vps", port: 22) }
        }
    }

    @Test("something thrown that is no room's failure is said as it is, exit 69; a room's failure stays itself")
    func unexpected() {
        struct Stray: Error, CustomStringConvertible { var description: String { "a stray error" } }
        let stray = asFailure(Stray())
        #expect(
            stray.errorDescription == "a stray error" && stray.exitStatus == .unavailable && stray.layer == "octunnel")
        #expect(asFailure(Self.hostKey).isSame(as: Self.hostKey))
        #expect(octunnelFailure(Stray()) == nil)
        let read = AnyFailure.reading("/c.json", failed: Stray())
        #expect(read == AnyFailure(LocalFileError.cannotRead(path: "/c.json", reason: "a stray error")))
    }

    @Test("a room says its layer once; a case in another layer names its own, and a box keeps the room's")
    func layers() throws {
        let cases: [(any OCTunnelFailure, String, OCTunnelCore.ExitStatus)] = [
            (ForwardError.staleForward(remoteHost: "vps", remotePort: 18080, seconds: 9), "forward", .unavailable),
            (ForwardError.badForward(reason: "port 8080 twice"), "local port", .usage),
            (ConnectError.cannotResolve(host: "vps", reason: "no such host"), "resolve", .unavailable),
            (ConnectError.notSSH(host: "vps", port: 22, detail: "HTTP"), "ssh", .unavailable),
            (KeyError.rotationPending(path: "/k/rotation.json"), "rotation", .cannotCreate),
            (KeyError.noKey(path: "/k/id_ed25519"), "key", .noInput),
            (PushError.notTapped(seconds: 30), "push", .pushNotAnswered),
            (
                PushError.settings(AnyFailure(LocalFileError.cannotRead(path: "/c.json", reason: "r"))), "local files",
                .dataError
            ),
            (SettingsError.missingTarget(role: .home, profile: .default), "settings", .usage),
            (
                AnyFailure(ServiceError.serviceManagerFailed(command: "systemctl", detail: "d")), "service manager",
                .unavailable
            ),
        ]
        for (failure, layer, status) in cases {
            #expect(failure.layer == layer && failure.exitStatus == status, "\(failure)")
            #expect(failure.errorDescription == failure.details.words && !failure.details.words.isEmpty)
            #expect(try #require(octunnelFailure(failure as any Error)).isSame(as: failure))
        }
        #expect(
            SettingsError.badTarget("a b", reason: "r").message
                == SettingsError.badTarget("a b", reason: "r").errorDescription)
    }
}
