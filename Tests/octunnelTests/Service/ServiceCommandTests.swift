import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `octunnel service …` run as a user runs it, from a temp HOME and XDG_CONFIG_HOME. The service
/// manager is a stand-in `systemctl`/`launchctl` first on PATH that logs its arguments, so no
/// test ever reaches this machine's real user manager.
@Suite("octunnel service install, uninstall and status", .ownThreads)
struct ServiceCommandTests {
    /// A temp HOME with saved tunnel settings for the default profile and for `work`, and a stand-in service manager.
    struct Setup {
        let dir: String
        var octunnelHome: String { dir + "/oct" }
        var stubs: String { dir + "/stubs" }
        var log: String { dir + "/manager.log" }
        var unitDirectory: String { dir + "/xdg/systemd/user" }

        init(_ dir: String, managerExit: Int = 0) throws {
            self.dir = dir
            try FileManager.default.createDirectory(atPath: dir + "/stubs", withIntermediateDirectories: true)
            let script = """
                #!/bin/sh
                echo "$(basename "$0") $*" >> '\(dir)/manager.log'
                case "$*" in *is-enabled*) echo enabled ;; *is-active*) echo active ;; esac
                if [ \(managerExit) -ne 0 ]; then echo "Failed to connect to bus: stand-in says no" >&2; fi
                exit \(managerExit)

                """
            for tool in ["systemctl", "launchctl"] { try writeText(script, to: dir + "/stubs/" + tool, mode: 0o755) }
            let sections =
                #"{"tunnel":{"host":"vps.example.com","port":22,"username":"me","remotePort":18080,"localPort":4096,"homePort":4096}}"#
            let work =
                #"{"tunnel":{"host":"work.example.com","port":22,"username":"w","remotePort":18081,"localPort":4097,"homePort":4096},"home":{"host":"work.example.com","port":22,"username":"h","remotePort":18081,"homePort":4096}}"#
            try FileManager.default.createDirectory(
                atPath: dir + "/oct", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try writeText(
                #"{"version":2,"profiles":{"default":\#(sections),"work":\#(work)}}"#, to: dir + "/oct/config.json")
        }

        func environment(path: String? = nil) -> [String: String] {
            Octunnel.environment(
                home: dir, ["XDG_CONFIG_HOME": dir + "/xdg", "PATH": path ?? stubs + ":/usr/bin:/bin"])
        }

        func run(_ arguments: [String], path: String? = nil) throws -> ProcessResult {
            try Octunnel.run(
                ["service"] + arguments + ["--home", octunnelHome], in: dir, environment: environment(path: path))
        }

        var managerCalls: [String] {
            ((try? readText(log)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    /// A `Setup` in a temporary directory, and that directory, for `body`.
    static func withSetup(_ body: (_ setup: Setup, _ dir: String) throws -> Void) throws {
        try withTemporaryDirectory { dir in try body(try Setup(dir), dir) }
    }

    @Test func printWritesNothingAndPrintsTheUnit() throws {
        try Self.withSetup { setup, dir in

            let printed = try setup.run(["install", "tunnel", "--print"])

            #expect(printed.status == 0, "\(printed)")
            #expect(
                printed.stdout.contains(
                    "\nExecStart=\(try #require(Octunnel.path)) tunnel up --home \(setup.octunnelHome) --profile default\n"
                ))
            #expect(printed.stdout.contains("\nRestartPreventExitStatus=64 65 66 76 77 78 80 81\n"))
            #expect(printed.stderr.contains("nothing written"))
            #expect(!fileExists(dir + "/xdg"), "--print created something")
            #expect(setup.managerCalls.isEmpty)
            #expect(try setup.run(["install", "tunnel", "--print", "--now"]).status == 64)
        }
    }

    @Test func installWritesTheUnitAndSaysHowToStartItThenStatusDescribesIt() throws {
        try Self.withSetup { setup, dir in

            let installed = try setup.run(["install", "tunnel", "--profile", "work"])

            #expect(installed.status == 0, "\(installed)")
            let path = setup.unitDirectory + "/octunnel-tunnel-work.service"
            #expect(try readText(path).contains(" tunnel up --home \(setup.octunnelHome) --profile work\n"))
            #expect(installed.stdout.isEmpty)
            #expect(
                installed.stderr.contains(
                    "systemctl --user daemon-reload && systemctl --user enable --now octunnel-tunnel-work.service"))
            #expect(setup.managerCalls.isEmpty, "install without --now ran \(setup.managerCalls)")
            #expect(!fileExists(setup.unitDirectory + "/octunnel-tunnel.service"))

            let status = try setup.run(["status", "tunnel", "--profile", "work"])
            #expect(status.status == 0, "\(status)")
            #expect(status.stdout.contains("octunnel-tunnel-work.service"))
            #expect(status.stdout.contains("(written by octunnel)"))
            #expect(status.stdout.contains("enabled: enabled"))
            #expect(status.stdout.contains("active:  active"))

            let absent = try setup.run(["status", "tunnel"])
            #expect(absent.status == 66)
            #expect(absent.stderr.contains("octunnel service install tunnel"))
        }
    }

    @Test func theHomeRoleNeedsItsOwnSavedSettings() throws {
        try Self.withSetup { setup, dir in

            let missing = try setup.run(["install", "home"])
            #expect(missing.status == 66)
            #expect(missing.stderr.contains("octunnel home up TARGET --save"))
            #expect(!fileExists(dir + "/xdg"))

            let installed = try setup.run(["install", "home", "--profile", "work"])
            #expect(installed.status == 0, "\(installed)")
            #expect(
                try readText(setup.unitDirectory + "/octunnel-home-work.service").contains(
                    " home up --home \(setup.octunnelHome) --profile work\n"))

            let nothingSaved = try Octunnel.run(
                ["service", "install", "tunnel", "--home", dir + "/empty"], in: dir, environment: setup.environment())
            #expect(nothingSaved.status == 66)
            #expect(nothingSaved.stderr.contains("octunnel tunnel up TARGET --save"))
        }
    }

    /// Each end's unit runs its profile, whose push holds the URL, the token and CA files' paths and the detail.
    @Test("the push saved by --save rides in both ends' units (the profile's push); no token in any file")
    func bothUnitsCarryTheSavedPush() throws {
        try Self.withSetup { setup, dir in
            let token = "tk_unitSecret42"
            try writeText(token + "\n", to: dir + "/ntfy-token", mode: 0o600)
            try writeText("not a real CA\n", to: dir + "/ca.pem", mode: 0o644)
            let home = OctunnelDirectory(path: setup.octunnelHome)
            let profile = try ProfileName("work")
            // What `tunnel up` and `home up` run for --push … --save (PushFlags → PushChoices).
            let typed = PushChoices(
                url: "https://ntfy.example.org/oc-unit", tokenFile: dir + "/ntfy-token", caFile: dir + "/ca.pem",
                detail: .full)
            _ = try typed.resolve(directory: home, profile: profile, save: true)

            for role in ["tunnel", "home"] {
                let installed = try setup.run(["install", role, "--profile", "work"])
                #expect(installed.status == 0, "\(installed)")
                let unit = try readText(setup.unitDirectory + "/octunnel-\(role)-work.service")
                #expect(unit.contains(" \(role) up --home \(setup.octunnelHome) --profile work\n"), "\(unit)")
                #expect(!unit.contains(token) && !installed.stdout.contains(token) && !installed.stderr.contains(token))
            }
            // What each unit's `up` runs with no push flag: the profile's saved push, the token read from its file.
            let run = try #require(try PushChoices().resolve(directory: home, profile: profile, save: false))
            #expect(run.settings.url.text() == "https://ntfy.example.org/oc-unit" && run.settings.detail == .full)
            #expect(
                run.settings.tokenFile == dir + "/ntfy-token" && run.settings.caFile == dir + "/ca.pem"
                    && run.token == token)
            let config = try readText(setup.octunnelHome + "/config.json")
            #expect(!config.contains(token) && config.contains(dir + "/ntfy-token"), "\(config)")
            let shown = try Octunnel.run(
                ["config", "show", "--profile", "work", "--home", setup.octunnelHome], in: dir,
                environment: setup.environment())
            #expect(
                shown.status == 0 && shown.stdout.contains("oc-unit") && shown.stdout.contains(#""detail":"full""#)
                    && !shown.stdout.contains(token), "\(shown)")
        }
    }

    @Test func aFileOctunnelDidNotWriteIsNeitherOverwrittenNorRemovedWithoutForce() throws {
        try Self.withSetup { setup, dir in
            let path = setup.unitDirectory + "/octunnel-tunnel.service"
            try FileManager.default.createDirectory(atPath: setup.unitDirectory, withIntermediateDirectories: true)
            let mine = "[Service]\nExecStart=/usr/bin/ssh -N me@vps\n"
            try writeText(mine, to: path, mode: 0o644)

            let install = try setup.run(["install", "tunnel"])
            #expect(install.status == 73)
            #expect(install.stderr.contains("--force"))
            let uninstall = try setup.run(["uninstall", "tunnel"])
            #expect(uninstall.status == 73)
            #expect(try readText(path) == mine)
            #expect(setup.managerCalls.isEmpty, "a refused uninstall still stopped the service: \(setup.managerCalls)")
            let status = try setup.run(["status", "tunnel"])
            #expect(status.stdout.contains("(not written by octunnel)"))

            let forced = try setup.run(["install", "tunnel", "--force"])
            #expect(forced.status == 0, "\(forced)")
            #expect(forced.stderr.contains("replaced \(path)"))
            #expect(try readText(path).contains("octunnel-managed sha256:"))
        }
    }

    @Test func nowStartsItAndUninstallStopsItThenRemovesOnlyItsFile() throws {
        try Self.withSetup { setup, dir in
            let path = setup.unitDirectory + "/octunnel-tunnel.service"

            let started = try setup.run(["install", "tunnel", "--now"])

            #expect(started.status == 0, "\(started)")
            #expect(
                setup.managerCalls == [
                    "systemctl --user daemon-reload", "systemctl --user enable --now octunnel-tunnel.service",
                ])
            try writeText("", to: setup.log)
            try writeText("# keep\n", to: setup.unitDirectory + "/other.service", mode: 0o644)

            let removed = try setup.run(["uninstall", "tunnel"])

            #expect(removed.status == 0, "\(removed)")
            #expect(
                setup.managerCalls == [
                    "systemctl --user disable --now octunnel-tunnel.service", "systemctl --user daemon-reload",
                ])
            #expect(!fileExists(path))
            #expect(try readText(setup.unitDirectory + "/other.service") == "# keep\n")
            let again = try setup.run(["uninstall", "tunnel"])
            #expect(again.status == 0)
            #expect(again.stderr.contains("nothing to remove"))
        }
    }

    @Test(
        "--rotate-every DAYS: a one-shot unit running keygen --rotate --install --if-older-than DAYS, started daily by its timer; uninstall removes all three"
    )
    func rotateEveryInstallsTheRotationAndItsTimer() throws {
        try withTemporaryDirectory { dir in
            let setup = try Setup(dir)
            let binary = try #require(Octunnel.path)
            let printed = try setup.run(["install", "home", "--profile", "work", "--print", "--rotate-every", "30"])
            #expect(printed.status == 0, "\(printed)")
            #expect(
                printed.stdout.contains(
                    "\nType=oneshot\nExecStart=\(binary) keygen --rotate --install --if-older-than 30 --home \(setup.octunnelHome) --profile work --listen\n"
                ))
            #expect(
                printed.stdout.contains(
                    "\n[Timer]\nOnCalendar=daily\nRandomizedDelaySec=1h\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n"
                ))
            #expect(!fileExists(dir + "/xdg"), "--print created something")
            #expect(try setup.run(["install", "tunnel", "--rotate-every", "0"]).status == 64)

            let started = try setup.run(["install", "tunnel", "--now", "--rotate-every", "30"])
            #expect(started.status == 0, "\(started)")
            let rotate = setup.unitDirectory + "/octunnel-tunnel-rotate.service",
                timer = setup.unitDirectory + "/octunnel-tunnel-rotate.timer"
            #expect(
                try readText(rotate).contains(
                    "ExecStart=\(binary) keygen --rotate --install --if-older-than 30 --home \(setup.octunnelHome) --profile default\n"
                ))
            #expect(try readText(timer).contains("octunnel-managed sha256:"))
            #expect(started.stderr.contains("wrote \(timer)"))
            #expect(
                setup.managerCalls == [
                    "systemctl --user daemon-reload", "systemctl --user enable --now octunnel-tunnel.service",
                    "systemctl --user daemon-reload", "systemctl --user enable --now octunnel-tunnel-rotate.timer",
                ])
            try writeText("", to: setup.log)

            let removed = try setup.run(["uninstall", "tunnel"])
            #expect(removed.status == 0, "\(removed)")
            #expect(
                !fileExists(rotate) && !fileExists(timer)
                    && !fileExists(setup.unitDirectory + "/octunnel-tunnel.service"))
            #expect(
                setup.managerCalls.contains("systemctl --user disable --now octunnel-tunnel-rotate.timer"),
                "\(setup.managerCalls)")

            let launchd = try setup.run(["install", "tunnel", "--print", "--format", "launchd", "--rotate-every", "7"])
            let agents = launchd.stdout.components(separatedBy: "<?xml")
            #expect(agents.count == 3, "\(launchd)")
            #expect(agents.last?.contains("<string>dev.octunnel.tunnel-rotate</string>") == true)
            #expect(agents.last?.contains("<key>StartInterval</key>\n    <integer>86400</integer>") == true)
            #expect(agents.last?.contains("KeepAlive") == false)
        }
    }

    @Test func nowWithoutAWorkingServiceManagerIs69AndKeepsTheFile() throws {
        try Self.withSetup { setup, dir in
            let path = setup.unitDirectory + "/octunnel-tunnel.service"
            try FileManager.default.createDirectory(atPath: dir + "/nothing", withIntermediateDirectories: true)

            let noTool = try setup.run(["install", "tunnel", "--now"], path: dir + "/nothing")
            #expect(noTool.status == 69, "\(noTool)")
            #expect(noTool.stderr.contains("systemctl not found"))
            #expect(fileExists(path))

            let failing = try Setup(dir + "/failing", managerExit: 1)
            let refused = try failing.run(["install", "tunnel", "--now"])
            #expect(refused.status == 69, "\(refused)")
            #expect(refused.stderr.contains("stand-in says no"))
            #expect(fileExists(failing.unitDirectory + "/octunnel-tunnel.service"))
            // An unreachable manager does not keep uninstall from removing the file; it warns.
            let removed = try failing.run(["uninstall", "tunnel"])
            #expect(removed.status == 0, "\(removed)")
            #expect(removed.stderr.contains("warning"))
            #expect(!fileExists(failing.unitDirectory + "/octunnel-tunnel.service"))
        }
    }

    @Test func launchdAgentsGoToLibraryWithTheirLogDirectory() throws {
        try Self.withSetup { setup, dir in

            let installed = try setup.run(["install", "tunnel", "--format", "launchd", "--now"])

            #expect(installed.status == 0, "\(installed)")
            let path = dir + "/Library/LaunchAgents/dev.octunnel.tunnel.plist"
            #expect(try readText(path).contains("<key>KeepAlive</key>"))
            #expect(fileExists(dir + "/Library/Logs/octunnel"))
            #expect(setup.managerCalls == ["launchctl bootstrap gui/\(getuid()) \(path)"])
            #expect(installed.stderr.contains("launchctl bootstrap gui/$(id -u) \(path)"))
            #expect(try setup.run(["install", "tunnel", "--format", "bogus"]).status == 64)
            #expect(try setup.run(["install", "laptop"]).status == 64)
        }
    }
}
