import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("which OpenCode answers: one classifier for every health answer", .ownThreads)
struct OpenCodeAnswerTests {
    private func classify(
        _ path: String, _ status: Int, _ body: String, type: String? = "application/json"
    ) -> OpenCodeAnswer {
        OpenCodeAnswer.classify(path: path, status: status, contentType: type, body: Array(body.utf8))
    }

    @Test("each generation's own health answer names its version and API")
    func healthy() {
        #expect(
            classify("/global/health", 200, #"{"healthy":true,"version":"1.14.30"}"#)
                == .openCode(version: "1.14.30", generation: .one))
        #expect(
            classify(
                "/api/info", 200,
                #"{"version":"2.0.12","pid":4242,"urls":["http://127.0.0.1:49374"],"paths":{"tmp":"/tmp"}}"#)
                == .openCode(version: "2.0.12", generation: .two))
        #expect(
            classify("/api/status", 200, #"{"version":"2.0.9","pid":17}"#)
                == .openCode(version: "2.0.9", generation: .two))
        #expect(
            classify("/api/health", 200, #"{"healthy":true,"version":"2.0.3","pid":9}"#)
                == .openCode(version: "2.0.3", generation: .two))
    }

    @Test("OpenCode's 404s (empty, JSON) mean 'not this version'; web pages are not conclusive")
    func misses() {
        #expect(classify("/api/info", 404, "", type: nil) == .routeMissing)
        #expect(classify("/api/status", 404, #"{"_tag":"RouteNotFound"}"#) == .routeMissing)
        #expect(classify("/global/health", 404, #"{"error":"not found"}"#) == .routeMissing)
        #expect(
            classify(
                "/global/health", 200, "<!doctype html><html><body><div id=\"root\"></div></body></html>",
                type: "text/html") == .webPage)
        #expect(classify("/api/info", 200, "<html><body>Welcome to nginx!</body></html>", type: nil) == .webPage)
    }

    @Test("401: 2.x's JSON UnauthorizedError says API 2 on any route; 1.x's plain 401 on /global/health says API 1")
    func passwords() {
        #expect(classify("/global/health", 401, "Unauthorized", type: "text/plain") == .needsPassword(generation: .one))
        #expect(
            classify("/api/info", 401, #"{"_tag":"UnauthorizedError","message":"Authentication required"}"#)
                == .needsPassword(generation: .two))
        #expect(
            classify("/global/health", 401, #"{"_tag":"UnauthorizedError","message":"Authentication required"}"#)
                == .needsPassword(generation: .two))
    }

    @Test("another server's JSON, a 404 page in plain text, a 500: not OpenCode, with what it said")
    func foreign() {
        guard case .foreign(let detail) = classify("/global/health", 200, #"{"status":"ok"}"#) else {
            Issue.record("not foreign"); return
        }
        #expect(detail.contains("HTTP 200 from /global/health"))
        #expect(detail.contains("status"))
        // no pid: not OpenCode 2.x's /api/info
        #expect(classify("/api/info", 200, #"{"version":"1.0"}"#) != .openCode(version: "1.0", generation: .two))
        guard case .foreign = classify("/global/health", 404, "404 page not found", type: "text/plain") else {
            Issue.record("plain 404"); return
        }
        guard case .foreign(let error) = classify("/global/health", 500, "boom", type: "text/plain") else {
            Issue.record("500"); return
        }
        #expect(error.contains("HTTP 500"))
        #expect(
            classify("/global/health", 200, #"{"healthy":false,"version":"1.0.0"}"#)
                != .openCode(version: "1.0.0", generation: .one))
    }

    @Test("the probe order is documented: /global/health, /api/info, /api/status, /api/health")
    func order() {
        #expect(
            OpenCodeAnswer.healthRoutes.map(\.path) == ["/global/health", "/api/info", "/api/status", "/api/health"])
        #expect(OpenCodeGeneration.one.eventPaths == ["/global/event", "/event"])
        #expect(OpenCodeGeneration.two.eventPaths == ["/api/event"])
    }
}

@Suite("--password-file: owner-only, one trailing newline dropped, never printed", .ownThreads)
struct OpenCodeCredentialsTests {
    @Test("a 0600 file: its one line is the password; LF or CRLF at the end is dropped")
    func reads() throws {
        let dir = try TempDirectory.holding(
            "octunnel-pw",
            [("lf", "s3cret pass\n", 0o600), ("crlf", "s3cret pass\r\n", 0o600), ("bare", "s3cret pass", 0o400)])
        for name in ["lf", "crlf", "bare"] {
            #expect(try OpenCodeCredentials.readPasswordFile(dir.file(name)) == "s3cret pass")
        }
        let credentials = try OpenCodeCredentials.load(
            passwordFile: dir.file("lf"),
            environment: ["OPENCODE_SERVER_PASSWORD": "other", "OPENCODE_SERVER_USERNAME": "me"])
        #expect(credentials.password == "s3cret pass")
        #expect(credentials.username == "me")
        #expect(credentials.authorization == "Basic " + Data("me:s3cret pass".utf8).base64EncodedString())
        for text in [
            credentials.description, credentials.debugDescription, "\(credentials)", String(reflecting: credentials),
        ] {
            #expect(!text.contains("s3cret"), "\(text)")
        }
        #expect(credentials.redact("echo s3cret pass and \(credentials.authorization!)") == "echo *** and Basic ***")
    }

    @Test("group- or other-readable: refused with the chmod hint, exit 77; missing 66; empty or two lines 65")
    func refuses() throws {
        let dir = try TempDirectory("octunnel-pw")
        try dir.write("open", "s3cret\n", mode: 0o640)
        #expect(throws: PasswordFileError.unsafePasswordFile(path: dir.file("open"), mode: 0o640)) {
            try OpenCodeCredentials.readPasswordFile(dir.file("open"))
        }
        let open = PasswordFileError.unsafePasswordFile(path: dir.file("open"), mode: 0o640)
        #expect(open.exitStatus == .permission)
        #expect(open.localizedDescription.contains("chmod 600 \(dir.file("open"))"))
        #expect(!open.localizedDescription.contains("s3cret"))
        // Through a symlink: the hint names the target, never `chmod 600 LINK` (that changes the target).
        #expect(symlink(dir.file("open"), dir.file("link")) == 0)
        do {
            _ = try OpenCodeCredentials.readPasswordFile(dir.file("link"))
            Issue.record("a symlink to an open password file was accepted")
        } catch {
            let text = error.localizedDescription
            let target = URL(fileURLWithPath: dir.file("open")).resolvingSymlinksInPath().path
            #expect(text.contains("symbolic link to \(target)") && text.contains("chmod 600 \(target)"), "\(text)")
            #expect(!text.contains("chmod 600 \(dir.file("link"))"), "\(text)")
            #expect(asFailure(error).exitStatus == .permission)
        }
        #expect(throws: PasswordFileError.noPasswordFile(path: dir.file("none"))) {
            try OpenCodeCredentials.readPasswordFile(dir.file("none"))
        }
        #expect(PasswordFileError.noPasswordFile(path: "x").exitStatus == .noInput)
        try dir.write("empty", "\n", mode: 0o600)
        try dir.write("two", "a\nb\n", mode: 0o600)
        for name in ["empty", "two"] {
            #expect(throws: PasswordFileError.self) { try OpenCodeCredentials.readPasswordFile(dir.file(name)) }
            do { _ = try OpenCodeCredentials.readPasswordFile(dir.file(name)) } catch {
                #expect(asFailure(error).exitStatus == .dataError)
            }
        }
        #expect(throws: PasswordFileError.badPasswordFile(path: dir.path, reason: "not a regular file")) {
            try OpenCodeCredentials.readPasswordFile(dir.path)
        }
    }

    @Test("no file: OPENCODE_SERVER_PASSWORD; empty means none; exit 79 for OpenCode's password errors")
    func environment() throws {
        let credentials = try OpenCodeCredentials.load(
            passwordFile: nil, environment: ["OPENCODE_SERVER_PASSWORD": "pw"])
        #expect(
            credentials.password == "pw" && credentials.username == "opencode"
                && credentials.sourceText == "OPENCODE_SERVER_PASSWORD")
        #expect(
            try OpenCodeCredentials.load(passwordFile: nil, environment: ["OPENCODE_SERVER_PASSWORD": ""]).password
                == nil)
        #expect(HealthError.healthNeedsPassword(generation: .two).exitStatus.rawValue == 79)
        #expect(
            HealthError.healthPasswordRefused(generation: .one, username: "opencode", source: "x").exitStatus.rawValue
                == 79)
        #expect(
            HealthError.healthNeedsPassword(generation: .two).localizedDescription.hasPrefix(
                "OpenCode 2 asks for a password: set OPENCODE_PASSWORD to the one `opencode serve` printed"))
    }

    @Test(
        "the password's sources in order: --password-file, the saved file, OPENCODE_PASSWORD, OPENCODE_SERVER_PASSWORD; the first variable set decides, empty means none"
    )
    func sourceOrder() throws {
        let dir = try TempDirectory.holding(
            "octunnel-pworder", [("flag", "from-flag\n", 0o600), ("saved", "from-saved\n", 0o600)])
        let both = ["OPENCODE_PASSWORD": "new", "OPENCODE_SERVER_PASSWORD": "legacy"]

        let flag = try OpenCodeCredentials.load(
            passwordFile: dir.file("flag"), savedPasswordFile: dir.file("saved"), environment: both)
        #expect(flag.password == "from-flag" && flag.source == .file(dir.file("flag")))
        let saved = try OpenCodeCredentials.load(
            passwordFile: nil, savedPasswordFile: dir.file("saved"), environment: both)
        #expect(
            saved.password == "from-saved"
                && saved.usedText == "password from the saved password file \(dir.file("saved"))")
        let new = try OpenCodeCredentials.load(passwordFile: nil, environment: both)
        #expect(new.password == "new" && new.usedText == "password from OPENCODE_PASSWORD")
        let legacy = try OpenCodeCredentials.load(
            passwordFile: nil, environment: ["OPENCODE_SERVER_PASSWORD": "legacy"])
        #expect(legacy.password == "legacy" && legacy.usedText == "password from OPENCODE_SERVER_PASSWORD")

        // OpenCode 2's env.ts: OPENCODE_PASSWORD set but empty turns the password off, legacy name or not.
        let off = try OpenCodeCredentials.load(
            passwordFile: nil, environment: ["OPENCODE_PASSWORD": "", "OPENCODE_SERVER_PASSWORD": "legacy"])
        #expect(off.password == nil && off.authorization == nil)
        #expect(off.usedText == "no password (OPENCODE_PASSWORD is empty)")
        let none = try OpenCodeCredentials.load(passwordFile: nil, environment: [:])
        #expect(none.password == nil && none.usedText == "no password")
        for credentials in [flag, saved, new, legacy] {
            #expect(!"\(credentials) \(credentials.usedText) \(credentials.sourceText)".contains(credentials.password!))
        }
    }

    @Test(
        "a 401's body never decides alone: a named one is API 2 on any route; unnamed, a refused /global/health is API 1"
    )
    func refusingGeneration() {
        let named = OpenCodeAnswer.needsPassword(generation: .two)
        let unnamedOne = OpenCodeAnswer.classify(path: "/global/health", status: 401, contentType: nil, body: [])
        let unnamedAPI = OpenCodeAnswer.classify(
            path: "/api/info", status: 401, contentType: "text/plain", body: Array("Unauthorized".utf8))
        #expect(
            unnamedAPI == .needsPassword(generation: nil), "1.x guards /api/... too: an unnamed 401 there names nothing"
        )
        // 2.x guarding its web app (empty 401 on /global/health), then its API's JSON 401.
        #expect(OpenCodeAnswer.refusingGeneration([("/global/health", unnamedOne), ("/api/info", named)]) == .two)
        // 1.x guarding every path, Hono's text or the Effect server's empty body.
        #expect(
            OpenCodeAnswer.refusingGeneration([
                ("/global/health", unnamedOne), ("/api/info", unnamedAPI), ("/api/health", unnamedAPI),
            ]) == .one)
        #expect(OpenCodeAnswer.refusingGeneration([("/api/info", unnamedAPI)]) == nil)
    }
}
