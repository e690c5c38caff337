import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// What `tunnel up` and `home up` print, through the one printer's `UpEvent`: the health
/// lines and JSON objects as docs/cli.md shows them, the failure as a JSON line only.
@Suite("Up events: health lines, the failure line, verbosity", .ownThreads)
struct UpEventTests {
    let report = HealthReport(
        version: "2.0.17", generation: .two, healthPath: "/api/info", eventsPath: "/api/event",
        healthMilliseconds: 41, eventsMilliseconds: 42)
    let home = HostPort(host: "127.0.0.1", port: 4096)
    let password = "password from OPENCODE_PASSWORD"

    @Test func aPassingTunnelHealthTestReadsAsDocumented() {
        let event = UpEvent.health(.tunnelPassed(report, host: "vps.example.com", password: password))
        #expect(
            event.text
                == "health ✓ OpenCode 2.0.17 (API 2) healthy through vps.example.com (41 ms), event stream /api/event ready (42 ms), password from OPENCODE_PASSWORD"
        )
        #expect(
            jsonLine(event.jsonObject)
                == #"{"api":2,"event":"health","eventsMs":42,"eventsPath":"/api/event","healthy":true,"ms":41,"password":"password from OPENCODE_PASSWORD","path":"/api/info","status":"connected","version":"2.0.17"}"#
        )
        #expect(!event.isVerbose)
        let record = HealthEvent.tunnelPassed(report, host: "vps.example.com", password: password).record(
            checkedAt: Date(timeIntervalSince1970: 0))
        #expect(record.ok && record.version == "2.0.17")
        #expect(record.detail == "OpenCode 2.0.17 (API 2) through vps.example.com, event stream /api/event ready")
    }

    @Test func aFailingHealthTestNamesItsLayer() {
        let error = ConnectError.connectionRefused(host: "127.0.0.1", port: 4096)
        let tunnel = HealthEvent.tunnelFailed(error)
        #expect(tunnel.text == "health ✗ \(error.localizedDescription)")
        #expect(tunnel.jsonObject["layer"] as? String == "tcp" && tunnel.jsonObject["healthy"] as? Bool == false)
        let atHome = HealthEvent.homeFailed(error, home: home)
        #expect(atHome.text == "home health ✗ on 127.0.0.1:4096: \(error.localizedDescription)")
        #expect(atHome.jsonObject["home"] as? String == "127.0.0.1:4096")
        #expect(atHome.record(checkedAt: Date()).detail == error.localizedDescription)
    }

    @Test func aPassingHomeHealthTestReadsAsDocumented() {
        let event = HealthEvent.homePassed(report, home: home, password: password)
        #expect(
            event.text
                == "home health ✓ OpenCode 2.0.17 (API 2) on 127.0.0.1:4096, event stream /api/event ready, password from OPENCODE_PASSWORD"
        )
        #expect(
            jsonLine(event.jsonObject)
                == #"{"api":2,"event":"health","healthy":true,"home":"127.0.0.1:4096","password":"password from OPENCODE_PASSWORD","status":"connected","version":"2.0.17"}"#
        )
        #expect(event.record(checkedAt: Date()).detail == "OpenCode 2.0.17 (API 2) on 127.0.0.1:4096")
    }

    @Test(
        "OpenCode 2's 401 with no password here: a pass that says what was not checked and how to have it checked, in text, JSON and status"
    )
    func aPasswordAskedPassReadsAsDocumented() {
        let asked = HealthReport(
            version: "2", generation: .two, healthPath: "/api/info", eventsPath: "", healthMilliseconds: 12,
            eventsMilliseconds: 0, passwordAsked: true)
        let tunnel = HealthEvent.tunnelPassed(asked, host: "vps.example.com", password: "no password")
        #expect(
            tunnel.text
                == "health ✓ OpenCode 2 reached through vps.example.com (it asks for a password; none given here: the API and event stream were not checked); to check them, set OPENCODE_PASSWORD or give --password-file PATH"
        )
        #expect(
            jsonLine(tunnel.jsonObject)
                == #"{"api":2,"event":"health","healthy":true,"message":"OpenCode 2 reached (it asks for a password; none given here: the API and event stream were not checked)","ms":12,"password":"no password","passwordAsked":true,"path":"/api/info","status":"connected","unchecked":["api","events"]}"#
        )
        let record = tunnel.record(checkedAt: Date())
        #expect(record.ok && record.version == nil)
        #expect(
            record.detail
                == "OpenCode 2 reached through vps.example.com (it asks for a password; none given here: the API and event stream were not checked)"
        )
        let atHome = HealthEvent.homePassed(asked, home: home, password: "no password")
        #expect(atHome.text.hasPrefix("home health ✓ OpenCode 2 reached on 127.0.0.1:4096 (it asks for a password;"))
        #expect(
            atHome.jsonObject["home"] as? String == "127.0.0.1:4096"
                && atHome.jsonObject["passwordAsked"] as? Bool == true)
    }

    @Test func theFailureThatEndsARunIsAJSONLineOnly() {
        let error = ConnectError.connectionRefused(host: "vps", port: 22)
        let event = UpEvent.failed(error)
        #expect(event.text == nil)
        #expect(event.jsonObject["event"] as? String == "error" && event.jsonObject["status"] as? String == "error")
        #expect(event.jsonObject["exitCode"] as? Int == Int(error.exitStatus.rawValue))
    }

    @Test func engineEventsKeepTheirTextAndVerbosity() {
        let opened = UpEvent.engine(.clientOpened(id: 3, peer: "127.0.0.1:5555"))
        #expect(opened.isVerbose && opened.text == "connection 3 from 127.0.0.1:5555")
        let warning = UpEvent.engine(.warning("careful"))
        #expect(!warning.isVerbose && warning.text == "warning: careful")
        #expect(UpRunner.exposureWarning(bind: "127.0.0.1") == nil && UpRunner.exposureWarning(bind: "::1") == nil)
        #expect(
            UpRunner.exposureWarning(bind: "0.0.0.0")?.text
                == "warning: listening on 0.0.0.0: anyone who can reach this machine on that network can use the tunnel"
        )
    }
}
