import Foundation

/// Asks for a key's passphrase the way OpenSSH's `read_passphrase` (readpass.c) does for ssh:
/// on the terminal without echo, or through `SSH_ASKPASS` when `SSH_ASKPASS_REQUIRE` asks for
/// it (`force`; `prefer` with `DISPLAY`/`WAYLAND_DISPLAY` set) or when there is no terminal
/// and a display is set. The answer is never in argv, the environment or a log.
public struct PassphrasePrompt: Sendable {
    /// Where the answer comes from.
    public enum Channel: Equatable, Sendable {
        case terminal
        case askpass(program: String)
        /// Neither is possible; the reason says what to set.
        case none(reason: String)
    }

    let environment: [String: String]
    let hasTerminal: Bool

    /// Reads this process's environment and whether `/dev/tty` opens.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, hasTerminal: Bool? = nil) {
        self.environment = environment
        if let hasTerminal {
            self.hasTerminal = hasTerminal
        } else {
            self.hasTerminal = Syscall.canOpenForReadingAndWriting("/dev/tty")
        }
    }

    /// OpenSSH's decision, for ssh's flags (no RP_ALLOW_STDIN: the terminal is /dev/tty).
    public var channel: Channel {
        func set(_ name: String) -> Bool { !(environment[name] ?? "").isEmpty }
        var allowAskpass = set("DISPLAY") || set("WAYLAND_DISPLAY")
        var useAskpass = false
        switch environment["SSH_ASKPASS_REQUIRE"]?.lowercased() {
        case "force":
            useAskpass = true
            allowAskpass = true
        case "prefer":
            useAskpass = allowAskpass
        case "never":
            allowAskpass = false
        default:
            break
        }
        if !useAskpass && !hasTerminal { useAskpass = true }
        if useAskpass && allowAskpass {
            let program = environment["SSH_ASKPASS"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultAskpass
            return .askpass(program: program)
        }
        if hasTerminal { return .terminal }
        if environment["SSH_ASKPASS_REQUIRE"]?.lowercased() == "never" {
            return .none(reason: "there is no terminal and SSH_ASKPASS_REQUIRE=never forbids SSH_ASKPASS")
        }
        return .none(
            reason: "there is no terminal to ask on, and SSH_ASKPASS is not used without "
                + "DISPLAY (set SSH_ASKPASS to a program that prints it and SSH_ASKPASS_REQUIRE=force)")
    }

    /// OpenSSH's `_PATH_SSH_ASKPASS_DEFAULT` on Debian.
    static let defaultAskpass = "/usr/bin/ssh-askpass"

    /// Asks once with `prompt`; the answer's line ending is cut, as OpenSSH does.
    public func ask(_ prompt: String) throws(PassphraseFailure) -> SecretBuffer {
        switch channel {
        case .terminal:
            let buffer = SecretBuffer(count: 1024)
            do {
                return buffer.slice(0..<(try TerminalReader.read(prompt: prompt, into: buffer)))
            } catch {
                throw PassphraseFailure(reason: error.reason)
            }
        case .askpass(let program): return try Askpass.run(program, prompt: prompt)
        case .none(let reason): throw PassphraseFailure(reason: reason)
        }
    }
}

/// Why no passphrase could be had (exit 81 for the user).
public struct PassphraseFailure: Error, Sendable {
    public let reason: String
}

/// Runs an askpass program: the prompt is its only argument, the answer its standard output.
enum Askpass {
    static func run(_ program: String, prompt: String) throws(PassphraseFailure) -> SecretBuffer {
        let buffer = SecretBuffer(count: 1024)
        let status: Int32, length: Int
        do {
            (status, length) = try ChildProcess.runForSecret(program, [prompt], into: buffer, searchPath: true)
        } catch {
            guard error.call == "posix_spawn" else { throw PassphraseFailure(reason: "\(error.call): \(error.errno)") }
            throw PassphraseFailure(reason: "cannot run SSH_ASKPASS program \(program): \(error.errno)")
        }
        let exited = status < 128
        guard exited && status == 0 else {
            throw PassphraseFailure(
                reason:
                    "the SSH_ASKPASS program \(program) \(exited ? "exited with status \(status)" : "was killed") (cancelled?)"
            )
        }
        let end = buffer.withUnsafeBytes { bytes in
            bytes[0..<length].firstIndex(where: { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) ?? length
        }
        return buffer.slice(0..<end)
    }
}
