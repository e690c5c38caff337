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
            let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
            if fd >= 0 { close(fd) }
            self.hasTerminal = fd >= 0
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
        return .none(reason: "there is no terminal to ask on, and SSH_ASKPASS is not used without DISPLAY (set SSH_ASKPASS to a program that prints it and SSH_ASKPASS_REQUIRE=force)")
    }

    /// OpenSSH's `_PATH_SSH_ASKPASS_DEFAULT` on Debian.
    static let defaultAskpass = "/usr/bin/ssh-askpass"

    /// Asks once with `prompt`; the answer's line ending is cut, as OpenSSH does.
    public func ask(_ prompt: String) throws(PassphraseFailure) -> SecretBuffer {
        switch channel {
        case .terminal: return try TerminalReader.read(prompt: prompt)
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
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw PassphraseFailure(reason: "pipe: \(String(cString: strerror(errno)))") }
        let actions = SpawnActions()
        actions.duplicate(pipeEnds[1], as: 1)
        actions.close(pipeEnds[0])
        actions.close(pipeEnds[1])
        let argv = [strdup(program), strdup(prompt), nil]
        defer { argv.forEach { free($0) } }
        let (rc, pid) = actions.spawn(program, arguments: argv, environment: nil, searchPath: true)
        close(pipeEnds[1])
        guard rc == 0 else {
            close(pipeEnds[0])
            throw PassphraseFailure(reason: "cannot run SSH_ASKPASS program \(program): \(String(cString: strerror(rc)))")
        }
        let buffer = SecretBuffer(count: 1024)
        var length = 0
        buffer.withUnsafeMutableBytes { bytes in
            while length < bytes.count - 1 {
                let got = read(pipeEnds[0], bytes.baseAddress! + length, bytes.count - 1 - length)
                if got < 0 && errno == EINTR { continue }
                if got <= 0 { break }
                length += got
            }
        }
        close(pipeEnds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw PassphraseFailure(reason: "the SSH_ASKPASS program \(program) \(exited ? "exited with status \(code)" : "was killed") (cancelled?)")
        }
        let end = buffer.withUnsafeBytes { bytes in
            bytes[0..<length].firstIndex(where: { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) ?? length
        }
        return buffer.slice(0..<end)
    }
}

/// Reads a line from `/dev/tty` with echo off, restoring the terminal even on Ctrl-C.
enum TerminalReader {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var savedFD: Int32 = -1

    static func read(prompt: String) throws(PassphraseFailure) -> SecretBuffer {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw PassphraseFailure(reason: "cannot open /dev/tty: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var original = termios()
        guard tcgetattr(fd, &original) == 0 else { throw PassphraseFailure(reason: "/dev/tty is not a terminal") }
        var quiet = original
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        saved = original
        savedFD = fd
        let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]
        var previous: [sigaction] = []
        for signal in signals {
            previous.append(Syscall.setSignalHandler(signal) { number in
                if TerminalReader.savedFD >= 0 { tcsetattr(TerminalReader.savedFD, TCSAFLUSH, &TerminalReader.saved) }
                Syscall.defaultSignalAction(number)
                raise(number)
            })
        }
        defer {
            tcsetattr(fd, TCSAFLUSH, &original)
            savedFD = -1
            for (index, signal) in signals.enumerated() { Syscall.restoreSignalAction(signal, previous[index]) }
        }
        let text = Array(("\r" + prompt).utf8)
        _ = write(fd, text, text.count)
        tcsetattr(fd, TCSAFLUSH, &quiet)
        let buffer = SecretBuffer(count: 1024)
        var length = 0
        var byte: UInt8 = 0
        while length < buffer.count - 1 {
            let got = Syscall.read(fd, &byte, 1)
            if got < 0 && errno == EINTR { continue }
            if got <= 0 || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
            buffer[length] = byte
            length += 1
        }
        byte = 0
        _ = write(fd, "\n", 1)
        return buffer.slice(0..<length)
    }
}
