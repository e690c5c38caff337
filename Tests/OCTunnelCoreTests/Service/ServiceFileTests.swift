import Foundation
import OCTunnelTestSupport
import OCTunnelCore
import Testing
#if canImport(Glibc)
    import Glibc
#endif

@Suite("Service files: the systemd unit and LaunchAgent for both roles, written only over octunnel's own", .ownThreads)
struct ServiceFileTests {
    /// A definition whose files go under `dir` (as HOME), running a real executable.
    func definition(
        _ role: Role, _ profile: ProfileName = .default, _ format: ServiceFormat = .systemd, in dir: String,
        octunnelHome: String? = nil
    ) -> ServiceDefinition {
        ServiceDefinition(
            role: role, profile: profile, format: format, executable: "/bin/true",
            octunnelHome: octunnelHome ?? dir + "/octunnel", environment: ["HOME": dir])
    }

    @Test func namesAndPlacesFollowTheRoleAndTheProfile() throws {
        let work = try ProfileName("work")
        let plain = ServiceDefinition(
            role: .tunnel, profile: .default, format: .systemd, executable: "/b/octunnel", octunnelHome: "/o",
            environment: ["HOME": "/u"])
        #expect(plain.path == "/u/.config/systemd/user/octunnel-tunnel.service")
        let xdg = ServiceDefinition(
            role: .home, profile: work, format: .systemd, executable: "/b/octunnel", octunnelHome: "/o",
            environment: ["HOME": "/u", "XDG_CONFIG_HOME": "/x"])
        #expect(xdg.path == "/x/systemd/user/octunnel-home-work.service")
        #expect(xdg.arguments == ["/b/octunnel", "home", "up", "--home", "/o", "--profile", "work"])
        let agent = ServiceDefinition(
            role: .tunnel, profile: work, format: .launchd, executable: "/b/octunnel", octunnelHome: "/o",
            environment: ["HOME": "/u"])
        #expect(agent.name == "dev.octunnel.tunnel-work")
        #expect(agent.path == "/u/Library/LaunchAgents/dev.octunnel.tunnel-work.plist")
        #expect(agent.logPath == "/u/Library/Logs/octunnel/tunnel-work.log")
    }

    @Test func theUnitRestartsExceptOnTheCodesRetryingCannotFix() throws {
        let unit = definition(.tunnel, in: "/u").render()
        let lines = unit.split(separator: "\n").map(String.init)
        #expect(lines.contains("After=network-online.target"))
        #expect(lines.contains("Wants=network-online.target"))
        #expect(lines.contains("Restart=always"))
        #expect(lines.contains("RestartSec=5"))
        #expect(lines.contains("WantedBy=default.target"))
        #expect(lines.contains("ExecStart=/bin/true tunnel up --home /u/octunnel --profile default"))
        let prevent = try #require(lines.first { $0.hasPrefix("RestartPreventExitStatus=") })
        let codes = prevent.dropFirst("RestartPreventExitStatus=".count).split(separator: " ").compactMap { Int32($0) }
        #expect(codes == ExitStatus.notRetriedByServices)
        for code: Int32 in [64, 65, 66, 76, 77, 80, 81] { #expect(codes.contains(code)) }
        for retried: Int32 in [0, 69, 73, 130] { #expect(!codes.contains(retried)) }
    }

    /// `systemd-analyze verify --user` on the unit of each role, from a home path that needs quoting.
    @Test(arguments: Role.allCases)
    func systemdAnalyzeAcceptsTheUnit(role: Role) throws {
        try withTemporaryDirectory { dir in
            let definition = definition(role, try ProfileName("work"), in: dir, octunnelHome: dir + "/my octunnel 100%")
            let installed = try ServiceInstaller(definition: definition).install(force: false)
            #expect(installed == .created)
            #expect(try readText(definition.path).contains(#"--home "\#(dir)/my octunnel 100%%" --profile work"#))
            guard
                let analyze = ToolLocator.find(
                    "systemd-analyze", environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin"])
            else {
                // A visible skip with its reason, never a silent pass (issue 25).
                try Test.cancel(
                    "systemd-analyze is not installed (Debian's systemd package): the unit was written but not verified"
                )
            }
            let runtime = dir + "/runtime"
            try FileManager.default.createDirectory(
                atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let verified = try run(
                analyze, ["verify", "--user", definition.path],
                environment: [
                    "PATH": "/usr/bin:/bin", "HOME": dir, "XDG_RUNTIME_DIR": runtime,
                    "XDG_CONFIG_HOME": dir + "/.config",
                ])
            #expect(verified.status == 0, "\(verified)")
            #expect(verified.stderr.isEmpty, "systemd-analyze warned: \(verified.stderr)")
        }
    }

    @Test(arguments: Role.allCases)
    func theLaunchAgentParsesAsAPlist(role: Role) throws {
        let definition = definition(
            role, try ProfileName("work"), .launchd, in: "/Users/me", octunnelHome: "/Users/me/a&b <octunnel>")
        guard let python = ToolLocator.find("python3", environment: ["PATH": "/usr/bin:/bin:/usr/local/bin"]) else {
            try Test.cancel("python3 is not installed: the launch agent was not parsed as a plist")
        }
        let parsed = try withTemporaryDirectory { dir in
            try writeText(definition.render(), to: dir + "/agent.plist")
            return try run(
                python,
                [
                    "-c", "import plistlib,sys,json; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))",
                    dir + "/agent.plist",
                ])
        }
        #expect(parsed.status == 0, "\(parsed)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: Any])
        #expect(object["Label"] as? String == "dev.octunnel.\(role)-work")
        #expect(
            object["ProgramArguments"] as? [String] == [
                "/bin/true", role.rawValue, "up", "--home", "/Users/me/a&b <octunnel>", "--profile", "work",
            ])
        #expect(object["RunAtLoad"] as? Bool == true)
        #expect(object["KeepAlive"] as? Bool == true)
        #expect(object["StandardOutPath"] as? String == "/Users/me/Library/Logs/octunnel/\(role)-work.log")
        #expect(object["StandardErrorPath"] as? String == "/Users/me/Library/Logs/octunnel/\(role)-work.log")
    }

    @Test(arguments: ServiceFormat.allCases)
    func installNeverOverwritesAFileItDidNotWriteWithoutForce(format: ServiceFormat) throws {
        try withTemporaryDirectory { dir in
            let installer = ServiceInstaller(definition: definition(.tunnel, .default, format, in: dir))
            let path = installer.definition.path
            try FileManager.default.createDirectory(
                atPath: installer.definition.directory, withIntermediateDirectories: true)
            try writeText("# my own unit\n", to: path, mode: 0o644)

            let refused = #expect(throws: ServiceError.self) { try installer.install(force: false) }
            #expect(refused?.exitStatus == .cannotCreate)
            #expect(refused?.localizedDescription.contains("--force") == true)
            #expect(try readText(path) == "# my own unit\n")
            #expect(try installer.state() == .foreign)

            let uninstallRefused = #expect(throws: ServiceError.self) { try installer.uninstall(force: false) }
            #expect(uninstallRefused?.exitStatus == .cannotCreate)
            #expect(try readText(path) == "# my own unit\n")

            #expect(try installer.install(force: true) == .replaced)
            #expect(try installer.state() == .ours)
            #expect(try mode(of: path) == 0o644)
        }
    }

    @Test func aFileChangedSinceOctunnelWroteItIsKeptToo() throws {
        try withTemporaryDirectory { dir in
            let installer = ServiceInstaller(definition: definition(.home, in: dir))
            let path = installer.definition.path
            #expect(try installer.install(force: false) == .created)
            #expect(try installer.install(force: false) == .unchanged)
            let edited = try readText(path).replacingOccurrences(of: "RestartSec=5", with: "RestartSec=30")
            try writeText(edited, to: path, mode: 0o644)

            #expect(try installer.state() == .edited)
            let refused = #expect(throws: ServiceError.self) { try installer.install(force: false) }
            #expect(refused?.localizedDescription.contains("changed since") == true)
            #expect(throws: ServiceError.self) { try installer.uninstall(force: false) }
            #expect(try readText(path) == edited)

            #expect(try installer.uninstall(force: true))
            #expect(!fileExists(path))
        }
    }

    @Test func uninstallRemovesItsFileAndTheEnablementLinkToItOnly() throws {
        try withTemporaryDirectory { dir in
            let installer = ServiceInstaller(definition: definition(.tunnel, in: dir))
            let definition = installer.definition
            #expect(try installer.install(force: false) == .created)
            let wants = definition.directory + "/default.target.wants"
            try FileManager.default.createDirectory(atPath: wants, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: wants + "/" + definition.name, withDestinationPath: definition.path)
            try FileManager.default.createSymbolicLink(
                atPath: wants + "/other.service", withDestinationPath: definition.path)
            try writeText("# someone else's\n", to: definition.directory + "/other.service", mode: 0o644)

            #expect(try installer.uninstall(force: false))

            #expect(!fileExists(definition.path))
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: wants + "/" + definition.name)) == nil)
            #expect(
                (try? FileManager.default.destinationOfSymbolicLink(atPath: wants + "/other.service"))
                    == definition.path)
            #expect(try readText(definition.directory + "/other.service") == "# someone else's\n")
            #expect(try installer.uninstall(force: false) == false)
        }
    }

    @Test(
        "the reverse command's units come from the same renderers: a binary path with a line break, `;` and `%` stays one ExecStart word (systemd's \\x0a), one <string> (&#10;), and the unit names its role's codes not to retry"
    )
    func reverseCommandUnitsShareTheRenderers() throws {
        var reverse = ReverseCommand(
            target: SSHTarget(user: "me", host: "vps.example.com", port: 22), remotePort: 18081, homePort: 4097)
        reverse.octunnelPath = "/opt/oct;x %h\nExecStartPre=/bin/touch /tmp/x"
        let unit = reverse.render(.homeSystemd).split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
        #expect(!unit.contains { $0.hasPrefix("ExecStartPre") }, "\(unit)")
        #expect(
            unit.contains(
                #"ExecStart="/opt/oct;x %%h\x0aExecStartPre=/bin/touch /tmp/x" home up me@vps.example.com:22 --remote-port 18081 --home-port 4097"#
            ), "\(unit)")
        #expect(
            unit.contains(
                "RestartPreventExitStatus=\(ExitStatus.notRetriedByServices.map(String.init).joined(separator: " "))"))
        let ssh = reverse.render(.systemd)
        #expect(ssh.contains("\nExecStart=/usr/bin/ssh -N -o ExitOnForwardFailure=yes "), "\(ssh)")
        #expect(!ssh.contains("RestartPreventExitStatus"), "ssh's own exit codes are not octunnel's: \(ssh)")
        let plist = reverse.render(.homeLaunchd)
        #expect(plist.contains("<string>/opt/oct;x %h&#10;ExecStartPre=/bin/touch /tmp/x</string>"), "\(plist)")
        #expect(plist.contains("<key>Label</key>\n    <string>dev.octunnel.home</string>"), "\(plist)")
    }
}
