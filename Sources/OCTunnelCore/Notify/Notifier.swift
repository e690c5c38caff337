import Foundation

/// What `tunnel up` does with the agent's moments (`--notify-command`, `--no-notify`).
public struct NotifyOptions: Sendable {
    /// Follow OpenCode's event stream and notify (`--no-notify` turns it off).
    public var enabled = true
    /// A program run once per moment, no shell, the facts in its environment (`AgentMoment.environment`).
    public var command: String?
    /// Seconds the program may run before it is killed.
    public var commandTimeout = Double(defaultTimeout)
    /// `--notify-timeout`'s default and its bounds, in seconds.
    public static let defaultTimeout = 10
    public static let timeoutRange = 1...600
    /// Show a desktop notification when a desktop session is there.
    public var desktop = true

    public init(enabled: Bool = true, command: String? = nil) {
        self.enabled = enabled
        self.command = command
    }
}

/// Where each moment goes: one line on stderr, always (an engine event); the user's program;
/// the desktop (the freedesktop Notifications service through `notify-send` on Linux when a
/// session bus is there, `osascript` on macOS). A program or a desktop that fails or hangs is
/// reported and never fatal, and never holds up the next moment.
final class Notifier: @unchecked Sendable {
    private let options: NotifyOptions
    private let emit: @Sendable (EngineEvent) -> Void
    private let environment: [String: String]
    private let record: @Sendable (AgentMoment) -> Void

    init(options: NotifyOptions, environment: [String: String] = ProcessInfo.processInfo.environment,
         record: @escaping @Sendable (AgentMoment) -> Void = { _ in }, emit: @escaping @Sendable (EngineEvent) -> Void) {
        self.options = options
        self.environment = environment
        self.record = record
        self.emit = emit
    }

    func notify(_ moment: AgentMoment) {
        emit(.notification(moment))
        record(moment)
        if let command = options.command {
            let environment = self.environment.merging(moment.environment) { $1 }
            let timeout = options.commandTimeout
            let emit = self.emit
            Thread.detachNewThread {
                Self.runCommand(command, environment: environment, timeout: timeout, emit: emit)
            }
        }
        if options.desktop, let desktop = Self.desktopCommand(moment, environment: environment) {
            let environment = self.environment
            Thread.detachNewThread {
                _ = try? ChildProcess.run(desktop.path, desktop.arguments, environment: environment, timeout: 5)
            }
        }
    }

    /// `--notify-command`: run, waited for up to `timeout` s; a failure is a warning.
    static func runCommand(_ command: String, environment: [String: String], timeout: Double, emit: @Sendable (EngineEvent) -> Void) {
        let shown = OutsideText.shown(command, limit: 120)
        do {
            let result = try ChildProcess.run(command, [], environment: environment, timeout: timeout, searchPath: !command.contains("/"))
            if result.timedOut {
                emit(.warning("--notify-command \(shown) ran longer than \(Int(timeout)) s and was stopped"))
            } else if result.status != 0 {
                let said = result.stderr.split(separator: "\n").last.map { ": " + OutsideText.shown(String($0), limit: 200) } ?? ""
                emit(.warning("--notify-command \(shown) exited \(result.status)\(said)"))
            }
        } catch {
            emit(.warning("--notify-command \(shown) could not start: \(error.description)"))
        }
    }

    /// The desktop's own notifier, when a desktop session is there: `notify-send` with a session
    /// bus (`DBUS_SESSION_BUS_ADDRESS`), `osascript` on macOS; nil otherwise (a server, ssh).
    static func desktopCommand(_ moment: AgentMoment, environment: [String: String]) -> (path: String, arguments: [String])? {
#if os(macOS)
        func quoted(_ text: String) -> String { "\"" + text.replacingScalars("\\", with: "\\\\").replacingScalars("\"", with: "\\\"") + "\"" }
        return ("/usr/bin/osascript", ["-e", "display notification \(quoted(moment.message)) with title \(quoted(moment.headline))"])
#else
        guard environment["DBUS_SESSION_BUS_ADDRESS"]?.isEmpty == false else { return nil }
        guard let path = ["/usr/bin/notify-send", "/bin/notify-send"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        return (path, ["--app-name=octunnel", "--urgency=\(moment.kind == .finished ? "normal" : "critical")", "--", moment.headline,
                       desktopBody(moment.message)])
#endif
    }

    /// The body as notify-send must be given it to show `text` as it is: notify-send reads C
    /// escapes in the body (`g_strcompress`: a title's `\033` would become a real escape byte),
    /// so backslashes are doubled; and the Notifications service reads the body as markup
    /// (`<b>`, `&amp;`), so `&`, `<` and `>` are written as entities. The summary is plain text
    /// to both and goes as it is.
    static func desktopBody(_ text: String) -> String {
        var body = ""
        for character in text {
            switch character {
            case "\\": body += "\\\\"
            case "&": body += "&amp;"
            case "<": body += "&lt;"
            case ">": body += "&gt;"
            default: body.append(character)
            }
        }
        return body
    }
}
