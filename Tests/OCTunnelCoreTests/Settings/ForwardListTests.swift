import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A run's forwards are one list from the settings to the engine's options and the reverse
/// command (issue 49): OpenCode's is a `Forward` like the others, marked and first.
@Suite("a run's forwards: one list, OpenCode's first", .ownThreads)
struct ForwardListTests {
    static let app = Forward(
        direction: .local, listen: HostPort(host: "127.0.0.1", port: 3000),
        target: HostPort(host: "127.0.0.1", port: 18082))

    @Test(
        "tunnel: OpenCode's forward is --bind:--local-port to --remote-host:--remote-port, then each -L; the engine's and the check's options carry the list"
    )
    func tunnel() throws {
        var flags = SettingsFlags(
            target: "me@vps:22", remoteHost: "::1", remotePort: 18081, homePort: 4100, localPort: 5000,
            bind: "127.0.0.2")
        flags.forwards = [Self.app]
        let settings = try ResolvedSettings.resolve(flags: flags, saved: nil, sshConfig: nil, role: .tunnel)
        let openCode = Forward(
            direction: .local, listen: HostPort(host: "127.0.0.2", port: 5000),
            target: HostPort(host: "::1", port: 18081),
            isOpenCode: true)
        #expect(settings.forwards == [openCode, Self.app])
        let connection = settings.connection(directory: OctunnelDirectory(path: "/h"), sshHome: "/u")
        #expect(settings.tunnelOptions(connection, keepalive: 15, warm: nil).forwards == settings.forwards)
        #expect(settings.checkOptions(connection).openCode == openCode)
        #expect(
            settings.reverse.sshArguments.filter { $0.contains(":") } == [
                "[::1]:18081:127.0.0.1:4100", "127.0.0.1:18082:127.0.0.1:3000",
            ])
        #expect(settings.reverse.homeUpArguments.suffix(2) == ["-R", "127.0.0.1:18082:127.0.0.1:3000"])
    }

    @Test(
        "home: OpenCode's forward is the VPS's --remote-host:--remote-port to --home-host:--home-port, then each -R; moving OpenCode's target moves only it"
    )
    func home() throws {
        let directory = try TempDirectory()
        var flags = SettingsFlags(target: "me@vps:22", remotePort: 18081, homePort: 4100, homeHost: "::1")
        let app = Self.app.homeSide
        flags.forwards = [app]
        let settings = try ResolvedSettings.resolve(flags: flags, saved: nil, sshConfig: nil, role: .home)
        let openCode = Forward(
            direction: .remote, listen: HostPort(host: "127.0.0.1", port: 18081),
            target: HostPort(host: "::1", port: 4100),
            isOpenCode: true)
        #expect(settings.forwards == [openCode, app])
        let home = OctunnelDirectory(path: directory.path)
        var options = settings.homeForwardOptions(
            settings.connection(directory: home, sshHome: "/u"), directory: home, keepalive: 15, httpErrors: true)
        #expect(options.forwards == settings.forwards)
        options.openCode.target = HostPort(host: "::1", port: 49374)
        #expect(options.forwards.map(\.target) == [HostPort(host: "::1", port: 49374), app.target])
    }
}
