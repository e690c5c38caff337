import OCTunnelLibc

/// Reads a line from `/dev/tty` with echo off, restoring the terminal even on Ctrl-C.
enum TerminalReader {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var savedFD: Int32 = -1

    /// The line typed after `prompt`, into `buffer` (its line ending dropped, at most
    /// `buffer.count - 1` bytes); how many bytes it is.
    static func read(prompt: String, into buffer: some SecretStorage) throws(TerminalFailure) -> Int {
        let fd = Syscall.open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw TerminalFailure(reason: "cannot open /dev/tty: \(Errno.current)") }
        defer { close(fd) }
        var original = termios()
        guard tcgetattr(fd, &original) == 0 else { throw TerminalFailure(reason: "/dev/tty is not a terminal") }
        var quiet = original
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        saved = original
        savedFD = fd
        let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]
        var previous: [sigaction] = []
        for signal in signals {
            previous.append(
                Syscall.setSignalHandler(signal) { number in
                    if TerminalReader.savedFD >= 0 {
                        tcsetattr(TerminalReader.savedFD, TCSAFLUSH, &TerminalReader.saved)
                    }
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
        var length = 0
        var byte: UInt8 = 0
        while length < buffer.count - 1 {
            let got = Syscall.read(fd, &byte, 1)
            if got <= 0 || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
            buffer[length] = byte
            length += 1
        }
        byte = 0
        _ = write(fd, "\n", 1)
        return length
    }
}
