import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// OpenCode 2's background service as its files say it (upstream service-config.ts,
/// global-roots.ts, client/src/effect/service.ts), and `home up`'s choice from them.
@Suite("OpenCode 2's service files: names, ports, directories, what home up makes of them", .ownThreads)
struct OpenCodeServiceFilesTests {
    /// A scratch home with XDG_STATE_HOME and XDG_CONFIG_HOME inside it.
    struct Scratch {
        let directory: TempDirectory
        var environment: [String: String] {
            ["XDG_STATE_HOME": directory.file("state"), "XDG_CONFIG_HOME": directory.file("config")]
        }
        var files: OpenCodeServiceFiles { OpenCodeServiceFiles(environment: environment, userHome: directory.path) }

        /// With OpenCode's registration (state/opencode/service.json) and its settings
        /// (config/opencode/service.json) holding `registration` and `settings` where given.
        init(registration: String? = nil, settings: String? = nil) throws {
            directory = try TempDirectory()
            if let registration { try write("state/opencode/service.json", registration) }
            if let settings { try write("config/opencode/service.json", settings) }
        }

        func write(_ relative: String, _ text: String) throws {
            let path = directory.file(relative)
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    @Test(
        "each channel's file name and default port, as service-config.ts: service.json and 49374 for the release channels, service-local.json and 49375, else the name made safe and a port from SHA-1"
    )
    func channels() {
        for channel in ["latest", "dev", "beta", "next"] {
            #expect(OpenCodeServiceFiles.fileName(channel: channel) == "service.json")
            #expect(OpenCodeServiceFiles.defaultPort(channel: channel) == 49374)
        }
        #expect(OpenCodeServiceFiles.fileName(channel: "local") == "service-local.json")
        #expect(OpenCodeServiceFiles.defaultPort(channel: "local") == 49375)
        #expect(OpenCodeServiceFiles.fileName(channel: "my build/1") == "service-my-build-1.json")
        #expect(OpenCodeServiceFiles.fileName(channel: "é") == "service--.json")
        // 10000 + the first 8 hex digits of SHA-1 modulo 50000 (sha1sum: prod 13420, nightly 51626).
        #expect(OpenCodeServiceFiles.defaultPort(channel: "prod") == 13420)
        #expect(OpenCodeServiceFiles.defaultPort(channel: "nightly") == 51626)
    }

    @Test(
        "directories: XDG_STATE_HOME and XDG_CONFIG_HOME when set and not empty, else ~/.local/state and ~/.config; OPENCODE_CONFIG_DIR replaces the config directory only"
    )
    func directories() {
        let plain = OpenCodeServiceFiles(environment: [:], userHome: "/home/u")
        #expect(
            plain.stateDirectory == "/home/u/.local/state/opencode"
                && plain.configDirectory == "/home/u/.config/opencode")
        let empty = OpenCodeServiceFiles(
            environment: ["XDG_STATE_HOME": "", "XDG_CONFIG_HOME": ""], userHome: "/home/u")
        #expect(
            empty.stateDirectory == "/home/u/.local/state/opencode"
                && empty.configDirectory == "/home/u/.config/opencode")
        let xdg = OpenCodeServiceFiles(
            environment: ["XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c", "OPENCODE_CONFIG_DIR": "/oc"],
            userHome: "/home/u")
        #expect(xdg.stateDirectory == "/s/opencode" && xdg.configDirectory == "/oc")
    }

    @Test(
        "a live registration gives the address and password; the settings' password when the registration has none; a wildcard url is reached on loopback"
    )
    func registration() throws {
        let scratch = try Scratch(
            registration:
                #"{"id":"a","version":"2.0.21","url":"http://127.0.0.1:49999","pid":4242,"password":"pw-reg"}"#)
        let found = scratch.files.find { $0 == 4242 }
        let service = try #require(found.service)
        #expect(found.problems.isEmpty)
        #expect(
            service.address == HostPort(host: "127.0.0.1", port: 49999) && service.password == "pw-reg"
                && service.channel == "latest")
        #expect(
            service.registration == "~/state/opencode/service.json"
                && service.passwordFile == "~/state/opencode/service.json")

        try scratch.write("state/opencode/service.json", #"{"url":"http://0.0.0.0:49998","pid":4242}"#)
        try scratch.write("config/opencode/service.json", #"{"port":49998,"password":"pw-set"}"#)
        let wildcard = try #require(scratch.files.find { _ in true }.service)
        #expect(wildcard.address == HostPort(host: "127.0.0.1", port: 49998))
        #expect(wildcard.password == "pw-set" && wildcard.passwordFile == "~/config/opencode/service.json")
    }

    @Test(
        "not running: a stale registration is named and the settings' port (or the channel's default) is used; the local channel when the release one has no files"
    )
    func notRunning() throws {
        let scratch = try Scratch(
            registration: #"{"url":"http://127.0.0.1:49999","pid":4242}"#, settings: #"{"port":50001,"password":"pw"}"#)
        let stale = scratch.files.find { _ in false }
        #expect(
            stale.problems.map(\.text) == [
                "OpenCode's service file ~/state/opencode/service.json names process 4242, which is not running: a stale registration"
            ])
        #expect(
            stale.service?.address == HostPort(host: "127.0.0.1", port: 50001) && stale.service?.registration == nil)

        let local = try Scratch()
        try local.write("config/opencode/service-local.json", "{}")
        #expect(local.files.find { _ in true }.service?.address == HostPort(host: "127.0.0.1", port: 49375))
        #expect(try Scratch().files.find { _ in true }.service == nil)
    }

    @Test(
        "files that cannot be used are named, one line each, and skipped: not JSON, no url, too large",
        arguments: [
            ("not json {", "is not a JSON object"),
            (#"{"pid":1}"#, #"has no usable "url" (an http://HOST:PORT address)"#),
            (#"{"url":"ftp://h:1","pid":1}"#, #"has no usable "url" (an http://HOST:PORT address)"#),
            (#"{"url":"http://h;id:1","pid":1}"#, #"has no usable "url" (an http://HOST:PORT address)"#),
            (String(repeating: " ", count: 70_000) + "{}", "is larger than 64 KiB: not a service file"),
        ])
    func unusable(text: String, reason: String) throws {
        let scratch = try Scratch(registration: text)
        let found = scratch.files.find { _ in true }
        #expect(found.service == nil)
        #expect(found.problems.map(\.text) == ["OpenCode's service file ~/state/opencode/service.json \(reason)"])
        let choice = HomeOpenCode.choose(
            configured: HostPort(host: "127.0.0.1", port: 4096), portGiven: false, files: scratch.files
        ) { _ in false }
        #expect(choice.home == HostPort(host: "127.0.0.1", port: 4096))
        #expect(
            choice.lines == [
                "OpenCode's service file ~/state/opencode/service.json \(reason)",
                "forwarding to 127.0.0.1:4096, the default",
            ])
    }

    @Test("a service file that cannot be read (a directory in its place) is named and skipped")
    func unreadable() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(
            atPath: scratch.directory.file("state/opencode/service.json"), withIntermediateDirectories: true)
        let found = scratch.files.find { _ in true }
        #expect(found.service == nil)
        #expect(
            found.problems.map(\.text) == [
                "OpenCode's service file ~/state/opencode/service.json is a directory, not a regular file: not used"
            ])
    }

    @Test(
        "read as OpenSSH reads its own files: a symbolic link (even to a good file), a file others may write, another user's file and a FIFO are named and not used; the FIFO does not block",
        .timeLimit(.minutes(1)))
    func untrusted() throws {
        let good = #"{"url":"http://127.0.0.1:49990","pid":\#(getpid()),"password":"pw"}"#
        let registration = "state/opencode/service.json"
        func problems(_ make: (Scratch, String) throws -> Void) throws -> (OpenCodeServiceFiles.Service?, [String]) {
            let scratch = try Scratch()
            try scratch.write("state/opencode/.keep", "")
            try make(scratch, scratch.directory.file(registration))
            let found = scratch.files.find { _ in true }
            return (found.service, found.problems.map(\.text))
        }
        let link = try problems { scratch, path in
            try scratch.write("elsewhere.json", good)
            try FileManager.default.createSymbolicLink(
                atPath: path, withDestinationPath: scratch.directory.file("elsewhere.json"))
        }
        #expect(
            link.0 == nil
                && link.1 == [
                    "OpenCode's service file ~/\(registration) is a symbolic link: not followed, not used (OpenCode writes a file there)"
                ])
        let open = try problems { scratch, path in
            try scratch.write(registration, good)
            #expect(chmod(path, 0o666) == 0)
        }
        #expect(
            open.0 == nil
                && open.1 == [
                    "OpenCode's service file ~/\(registration) may be written by others (mode 666): not used; `chmod go-w` it"
                ])
        let fifo = try problems { _, path in #expect(mkfifo(path, 0o600) == 0) }
        #expect(
            fifo.0 == nil
                && fifo.1 == ["OpenCode's service file ~/\(registration) is a FIFO, not a regular file: not used"])
        if geteuid() == 0 {
            let foreign = try problems { scratch, path in
                try scratch.write(registration, good)
                #expect(chown(path, 65534, 65534) == 0)
            }
            #expect(
                foreign.0 == nil
                    && foreign.1 == [
                        "OpenCode's service file ~/\(registration) is owned by uid 65534, not you: not used (anyone else could write what it says)"
                    ])
        }
    }

    @Test(
        "the files choose nothing off this machine: a registration or settings naming another host is named and not used (a name that looks like loopback too); the --home-host the user gave is allowed"
    )
    func offHost() throws {
        let scratch = try Scratch(
            registration: #"{"url":"http://10.200.0.2:8080","pid":1}"#, settings: #"{"password":"settings-pw"}"#)
        let found = scratch.files.find { _ in true }
        #expect(
            found.problems.map(\.text) == [
                "OpenCode's service file ~/state/opencode/service.json names 10.200.0.2:8080, not a loopback address: not used (octunnel forwards only to this machine, or to the --home-host you give)"
            ])
        #expect(
            found.service?.address == HostPort(host: "127.0.0.1", port: 49374) && found.service?.registration == nil,
            "the settings' own address, loopback")
        let given = scratch.files.find(allowedHost: "10.200.0.2") { _ in true }
        #expect(given.problems.isEmpty && given.service?.address == HostPort(host: "10.200.0.2", port: 8080))
        #expect(given.service?.password == nil, "the settings' password is for 127.0.0.1:49374, not this address")

        try scratch.write("state/opencode/service.json", #"{"url":"http://127.0.0.1.nip.example:8080","pid":1}"#)
        #expect(
            scratch.files.find { _ in true }.problems.first?.text.contains(
                "names 127.0.0.1.nip.example:8080, not a loopback address") == true)

        let lan = try Scratch()
        try lan.write("config/opencode/service.json", #"{"hostname":"192.0.2.7","port":50000,"password":"pw"}"#)
        let settingsOnly = lan.files.find { _ in true }
        #expect(settingsOnly.service == nil)
        #expect(
            settingsOnly.problems.map(\.text) == [
                "OpenCode's service file ~/config/opencode/service.json names 192.0.2.7:50000, not a loopback address: not used (octunnel forwards only to this machine, or to the --home-host you give)"
            ])
        let choice = HomeOpenCode.choose(
            configured: HostPort(host: "127.0.0.1", port: 4096), portGiven: false, files: lan.files
        ) { _ in false }
        #expect(
            choice.home == HostPort(host: "127.0.0.1", port: 4096)
                && choice.credentials(given: OpenCodeCredentials()).password == nil)
    }

    @Test(
        "a password goes only to the address its own file names: the settings' password reaches a registration only when it names the settings' port and host"
    )
    func passwordStaysWithItsAddress() throws {
        let scratch = try Scratch(
            registration: #"{"url":"http://localhost:49998","pid":1}"#, settings: #"{"port":49998,"password":"pw-set"}"#
        )
        #expect(scratch.files.find { _ in true }.service?.password == "pw-set")
        try scratch.write("state/opencode/service.json", #"{"url":"http://127.0.0.1:49997","pid":1}"#)
        let elsewhere = try #require(scratch.files.find { _ in true }.service)
        #expect(elsewhere.address.port == 49997 && elsewhere.password == nil && elsewhere.passwordFile == nil)
    }

    @Test(
        "following the service, off the loop: only a running service's registration moves home up's OpenCode forward; between a stop and the next start (no registration, settings left) it stays; files are read at most once a second unless forced, each read on the follower's thread, the loop woken when it is done",
        .timeLimit(.minutes(1)))
    func follower() throws {
        let scratch = try Scratch(settings: #"{"password":"pw"}"#)
        let start = HostPort(host: "127.0.0.1", port: 40001)
        let woken = DispatchSemaphore(value: 0)
        let follower = ServiceFollower(current: start, files: scratch.files, wake: { woken.signal() })
        #expect(follower.moved(now: 0) == nil, "nothing read yet")
        woken.wait()
        #expect(follower.moved(now: 0.1) == nil, "stopped: the settings' default port is no move")
        try scratch.write("state/opencode/service.json", #"{"url":"http://127.0.0.1:40002","pid":\#(getpid())}"#)
        #expect(follower.ask(now: 0.5, force: false) == 1, "not read again within a second")
        let forced = follower.ask(now: 0.5, force: true)
        #expect(forced == 2)
        woken.wait()
        #expect(follower.isDone(forced))
        #expect(follower.moved(now: 0.6)?.service.address == HostPort(host: "127.0.0.1", port: 40002))
        #expect(follower.current.port == 40002)
        #expect(follower.moved(now: 2) == nil)
        woken.wait()
        #expect(follower.moved(now: 2.1) == nil && follower.current.port == 40002)
    }

    @Test(
        "home up's choice: the service wins over the default port and says where from and whose password; a foreground serve answering there is named with the flag that picks it; --home-port skips the files"
    )
    func choice() throws {
        let scratch = try Scratch(
            registration: #"{"url":"http://127.0.0.1:49374","pid":\#(getpid()),"password":"secret-pw"}"#)
        let configured = HostPort(host: "127.0.0.1", port: 4096)
        let alone = HomeOpenCode.choose(configured: configured, portGiven: false, files: scratch.files) { _ in false }
        #expect(alone.home == HostPort(host: "127.0.0.1", port: 49374))
        #expect(
            alone.lines == [
                "OpenCode 2's background service (latest) at 127.0.0.1:49374, from ~/state/opencode/service.json; its password from ~/state/opencode/service.json, kept on this machine"
            ])
        let both = HomeOpenCode.choose(configured: configured, portGiven: false, files: scratch.files) {
            $0 == configured
        }
        #expect(both.home.port == 49374)
        #expect(
            both.lines.last?.hasSuffix(
                "; OpenCode also answers on 127.0.0.1:4096 (a foreground `opencode serve`?): give --home-port 4096 to forward that one instead"
            ) == true)
        #expect(!both.lines.joined().contains("secret-pw"))
        let told = HomeOpenCode.choose(configured: configured, portGiven: true, files: scratch.files) { _ in true }
        #expect(told.home == configured && told.lines.isEmpty && told.service == nil)

        // The health test's password: the user's when given (even an empty OPENCODE_PASSWORD), else the service's.
        let fromService = alone.credentials(given: OpenCodeCredentials())
        #expect(
            fromService.password == "secret-pw"
                && fromService.usedText == "password from OpenCode's service file ~/state/opencode/service.json")
        #expect(
            alone.credentials(given: OpenCodeCredentials(password: "mine", source: .environment("OPENCODE_PASSWORD")))
                .password == "mine")
        #expect(
            alone.credentials(given: OpenCodeCredentials(password: "", source: .environment("OPENCODE_PASSWORD")))
                .password == nil)
    }
}
