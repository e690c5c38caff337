import Foundation

/// One command for the service manager (`systemctl --user …`, `launchctl …`).
public struct ServiceCommand: Sendable, Equatable {
    /// The words run, the tool first.
    public let arguments: [String]
    /// How it is printed for people to copy (`gui/$(id -u)` rather than a number).
    public let shown: String
    /// A step whose failure is expected sometimes (stopping what may not be running) and ignored.
    public let mayFail: Bool

    init(_ arguments: [String], shown: String? = nil, mayFail: Bool = false) {
        self.arguments = arguments
        self.shown = shown ?? arguments.map(shellQuote).joined(separator: " ")
        self.mayFail = mayFail
    }
}

/// Talks to the service manager of a definition's format: the commands that enable, stop and
/// describe the service, and running them where the tool exists.
public struct ServiceManager: Sendable {
    public let definition: ServiceDefinition
    public let environment: [String: String]

    public init(definition: ServiceDefinition, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.definition = definition
        self.environment = environment
    }

    /// `systemctl` or `launchctl`.
    public var tool: String { definition.format == .systemd ? "systemctl" : "launchctl" }

    private var domain: String { "gui/\(Syscall.userID)" }
    private var serviceTarget: String { "\(domain)/\(definition.name)" }

    /// What enables the installed file and starts it now; `replacing` restarts a running one so it
    /// picks up the new file.
    public func enableCommands(replacing: Bool) -> [ServiceCommand] {
        let name = definition.name
        switch definition.format {
        case .systemd:
            // A rotation's unit is started by its timer only: the reload its timer's commands run is enough.
            if case .rotation = definition.job { return [] }
            return [
                ServiceCommand(["systemctl", "--user", "daemon-reload"]),
                ServiceCommand(["systemctl", "--user", "enable", "--now", name]),
            ]
                + (replacing ? [ServiceCommand(["systemctl", "--user", "restart", name])] : [])
        case .launchd:
            let bootstrap = ServiceCommand(
                ["launchctl", "bootstrap", domain, definition.path],
                shown: "launchctl bootstrap gui/$(id -u) \(shellQuote(definition.path))")
            return (replacing ? [bootout(mayFail: true)] : []) + [bootstrap]
        }
    }

    /// What stops and disables the service before its file is removed.
    public var disableCommands: [ServiceCommand] {
        switch definition.format {
        case .systemd:
            // Not enabled itself (its timer is): stopping it is enough, and it may not be running.
            if case .rotation = definition.job {
                return [ServiceCommand(["systemctl", "--user", "stop", definition.name], mayFail: true)]
            }
            return [ServiceCommand(["systemctl", "--user", "disable", "--now", definition.name])]
        case .launchd: return [bootout(mayFail: false)]
        }
    }

    /// What makes the manager forget the removed file.
    public var afterRemovalCommands: [ServiceCommand] {
        definition.format == .systemd ? [ServiceCommand(["systemctl", "--user", "daemon-reload"])] : []
    }

    private func bootout(mayFail: Bool) -> ServiceCommand {
        ServiceCommand(
            ["launchctl", "bootout", serviceTarget], shown: "launchctl bootout gui/$(id -u)/\(definition.name)",
            mayFail: mayFail)
    }

    /// The commands as one line to paste: `a && b`.
    public static func shown(_ commands: [ServiceCommand]) -> String {
        commands.map(\.shown).joined(separator: " && ")
    }

    /// Whether the tool is on `PATH`.
    public var isAvailable: Bool { ToolLocator.find(tool, environment: environment) != nil }

    /// Runs `commands` in order, stopping at the first failure that matters.
    public func run(_ commands: [ServiceCommand]) throws {
        for command in commands {
            let result = execute(command.arguments)
            if result.status != 0 && !command.mayFail {
                throw ServiceError.serviceManagerFailed(command: command.shown, detail: result.detail)
            }
        }
    }

    /// What the manager says about the service, as (label, answer) rows: enabled and running.
    public func describe() -> [(String, String)] {
        guard isAvailable else { return [("manager", "unknown: \(tool) not found on PATH")] }
        switch definition.format {
        case .systemd:
            return [
                ("enabled", answer(["systemctl", "--user", "is-enabled", definition.name])),
                ("active", answer(["systemctl", "--user", "is-active", definition.name])),
            ]
        case .launchd:
            let printed = execute(["launchctl", "print", serviceTarget])
            guard printed.status == 0 else { return [("loaded", "no")] }
            let state = printed.output.split(separator: "\n").lazy
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix("state = ") }?.dropFirst("state = ".count)
            return [("loaded", "yes"), ("state", state.map(String.init) ?? "unknown")]
        }
    }

    private func answer(_ arguments: [String]) -> String {
        let result = execute(arguments)
        let first = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        return first.isEmpty ? "unknown (\(result.detail))" : first
    }

    private struct Outcome {
        let status: Int32
        let stdout: String
        let output: String
        /// The first line of stderr (else stdout), or the exit status.
        var detail: String {
            let line = output.split(separator: "\n").first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
            return line.isEmpty ? "exit status \(status)" : line
        }
    }

    /// Runs the tool found on `PATH`; a missing tool is an outcome, not a crash.
    private func execute(_ arguments: [String]) -> Outcome {
        guard let executable = ToolLocator.find(arguments[0], environment: environment) else {
            return Outcome(status: 127, stdout: "", output: "\(arguments[0]) not found on PATH")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return Outcome(status: 126, stdout: "", output: "\(error)") }
        // Read both pipes to the end before waiting, on two threads, so neither can fill and block the tool.
        let errorData = LockedData()
        let reader = Thread { errorData.set(stderr.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let err = String(decoding: errorData.waitForValue(), as: UTF8.self)
        return Outcome(status: process.terminationStatus, stdout: out, output: err.isEmpty ? out : err + out)
    }
}

/// A value handed from one thread to another.
private final class LockedData: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Data?

    func set(_ data: Data) {
        condition.changing { value = data }
    }

    func waitForValue() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while value == nil { condition.wait() }
        return value!
    }
}
