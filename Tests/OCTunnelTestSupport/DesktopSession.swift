import Foundation

/// A desktop session of a test's own, as a laptop has one: a D-Bus session bus (`dbus-daemon` on
/// a socket in a temp dir), an X server (`Xvfb`, which picks a free display itself:
/// `-displayfd`) and a real notification server on that bus, Debian's `dunst`, which prints every
/// notification it is sent (`-print`): what a user would have seen. `environment` is what a
/// program of that session has. Stopped on `stop()` or deinit, the server first.
public final class DesktopSession: @unchecked Sendable {
    /// One notification the server was sent.
    public struct Shown: Equatable, Sendable {
        public var appName = ""
        public var summary = ""
        public var body = ""
        public var urgency = ""

        public init(appName: String = "", summary: String = "", body: String = "", urgency: String = "") {
            (self.appName, self.summary, self.body, self.urgency) = (appName, summary, body, urgency)
        }
    }

    public static let programs = [
        "/usr/bin/dbus-daemon", "/usr/bin/dbus-send", "/usr/bin/Xvfb", "/usr/bin/dunst", "/usr/bin/notify-send",
    ]

    public let directory: TempDirectory
    public let environment: [String: String]
    private var processes: [RunningProcess] = []

    public init() throws {
        if let missing = Self.programs.first(where: { !FileManager.default.isExecutableFile(atPath: $0) }) {
            throw HarnessError("\(missing) is missing (scripts/lib/packages.sh: OCTUNNEL_DESKTOP)")
        }
        directory = try TempDirectory("octunnel-desktop")
        let base = ["PATH": "/usr/bin:/bin", "HOME": directory.path]
        let bus = try RunningProcess(
            "/usr/bin/dbus-daemon",
            [
                "--session", "--nofork", "--nopidfile", "--print-address=1",
                "--address=unix:path=\(directory.file("bus"))",
            ], environment: base)
        let display = try RunningProcess(
            "/usr/bin/Xvfb", ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "640x480x24"], environment: base)
        var processes = [bus, display]
        func give(up why: String) -> HarnessError {
            processes.reversed().forEach { $0.stopGracefullyOrKill() }
            return HarnessError(why)
        }
        guard
            waitUntil(
                timeout: 20,
                { bus.stdout.first?.hasPrefix("unix:") == true && display.stdout.first.flatMap { Int($0) } != nil })
        else {
            throw give(up: "the session bus or Xvfb did not start: \(bus.stderrText) \(display.stderrText)")
        }
        let session = base.merging(["DBUS_SESSION_BUS_ADDRESS": bus.stdout[0], "DISPLAY": ":\(display.stdout[0])"]) {
            $1
        }
        // dunst's context menu (`dunstctl context`) asks its `dmenu` program to pick one of the
        // actions shown ("#Label (summary) [id,name]" a line): this one picks the line naming the
        // action written to `pick` (`choose(action:)`), and none before; what it picked goes to `picked`.
        let pick = """
            #!/bin/sh
            line=$(/usr/bin/grep -m 1 -F ",$(/usr/bin/cat '\(directory.file("pick"))' 2>/dev/null)]")
            [ -n "$line" ] && echo "$line" >> '\(directory.file("picked"))'
            echo "$line"

            """
        try pick.write(toFile: directory.file("pick.sh"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.file("pick.sh"))
        try "[global]\n    dmenu = \(directory.file("pick.sh"))\n".write(
            toFile: directory.file("dunstrc"), atomically: true, encoding: .utf8)
        let server = try RunningProcess(
            "/usr/bin/dunst", ["-conf", directory.file("dunstrc"), "-print"], environment: session)
        processes.append(server)
        // Ready once it owns the Notifications name on the bus.
        let owned = waitUntil(timeout: 20) {
            let answer = try? run(
                "/usr/bin/dbus-send",
                [
                    "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications",
                ],
                environment: session)
            return answer?.stdout.contains("boolean true") == true || !server.isRunning
        }
        guard owned, server.isRunning else {
            throw give(up: "dunst did not take the Notifications name: \(server.stderrText)")
        }
        environment = session
        self.processes = processes
    }

    /// The notifications the server printed so far, in order.
    public var shown: [Shown] {
        var all: [Shown] = []
        var current: Shown?
        func value(_ line: String, _ key: String) -> String? {
            let prefix = "\t\(key): "
            guard line.hasPrefix(prefix) else { return nil }
            var text = String(line.dropFirst(prefix.count))
            if text.hasPrefix("'") && text.hasSuffix("'") && text.count >= 2 {
                text = String(text.dropFirst().dropLast())
            }
            return text
        }
        for line in processes.last?.stdout ?? [] {
            if line == "{" { current = Shown(); continue }
            if line == "}" { if let current { all.append(current) }; current = nil; continue }
            if let text = value(line, "appname") { current?.appName = text }
            if let text = value(line, "summary") { current?.summary = text }
            if let text = value(line, "body") { current?.body = text }
            if let text = value(line, "urgency") { current?.urgency = text }
        }
        return all
    }

    /// Invokes the action named `action` of the notification shown, as a user's click does: the
    /// server's context menu (`dunstctl context`) with `action` picked.
    /// A notification just printed may not be on screen yet (dunst's menu lists only those that
    /// are), so the menu is opened again until the action was picked, up to `timeout` s.
    public func choose(action: String, timeout: Double = 20) throws {
        try? FileManager.default.removeItem(atPath: directory.file("picked"))
        try action.write(toFile: directory.file("pick"), atomically: true, encoding: .utf8)
        let picked = { FileManager.default.fileExists(atPath: self.directory.file("picked")) }
        let until = Date().addingTimeInterval(timeout)
        while !picked(), Date() < until {
            let result = try run("/usr/bin/dunstctl", ["context"], environment: environment)
            guard result.status == 0 else { throw HarnessError("dunstctl context: \(result.stderr)") }
            _ = waitUntil(timeout: 1, picked)
        }
        guard picked() else { throw HarnessError("dunst's menu never offered the action \(action)") }
    }

    /// Stops the server, the X server and the bus.
    public func stop() {
        processes.reversed().forEach { $0.stopGracefullyOrKill() }
        processes = []
    }

    deinit { stop() }
}
