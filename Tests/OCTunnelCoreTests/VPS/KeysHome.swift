import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// A VPS user's home directory in a temp directory, with the shells that run octunnel's key
/// programs in it as sshd would: the line's forced command (its program, `-c`) with HOME and
/// SSH_ORIGINAL_COMMAND set and nothing else but PATH; the scripts of `AuthorizedKeysScript` on
/// stdin (`sh -s`). dash (Debian's sh) and bash run with this machine's tools (mawk, GNU
/// coreutils); busybox's sh with only busybox's applets on PATH (as on Alpine).
final class KeysHome {
    /// Every shell, installed or not: one missing is reported by the test that needs it (`requireTool`).
    static let shells: [String] = ["/bin/dash", "/bin/bash", RecordedProc.busybox]
    /// The applets the programs may call, linked to busybox for its variant.
    static let busyboxTools = [
        "sh", "awk", "sed", "grep", "base64", "sha256sum", "mv", "chmod", "stat", "mkdir", "rmdir", "rm", "cat", "tr",
        "cmp", "tail", "head", "date", "sleep", "printf", "id", "ln", "echo",
    ]

    let root: TempDirectory
    /// $HOME.
    let home: String
    /// $HOME/.ssh/authorized_keys.
    var file: String { home + "/.ssh/authorized_keys" }

    /// A home (0755) with ~/.ssh (0700) unless `ssh` is false.
    init(ssh: Bool = true) throws {
        root = try TempDirectory("octunnel-keys")
        // A space in it: every path the programs build is quoted.
        home = root.file("home dir")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try setMode(0o755, of: home)
        if ssh {
            try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
            try setMode(0o700, of: home + "/.ssh")
        }
    }

    /// Writes authorized_keys as given, byte for byte.
    func write(_ text: String, mode: mode_t = 0o600) throws {
        try writeBytes(Array(text.utf8), to: file, mode: mode)
        try setMode(mode, of: file)
    }

    func contents() throws -> String { String(decoding: try readBytes(file), as: UTF8.self) }

    /// The shell's path, the words before the program, and the environment: PATH with busybox's
    /// applets only for busybox.
    func invocation(shell: String, command: String?) throws -> (String, [String], [String: String]) {
        try requireTool(
            shell, "the key programs are tested in dash, bash and busybox's sh (apt install dash bash busybox)")
        var environment = ["HOME": home, "PATH": "/usr/bin:/bin"]
        if let command { environment["SSH_ORIGINAL_COMMAND"] = command }
        guard shell == RecordedProc.busybox else { return (shell, [], environment) }
        let tools = root.file("busybox-bin")
        if !fileExists(tools) {
            try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
            for tool in Self.busyboxTools {
                try FileManager.default.createSymbolicLink(
                    atPath: tools + "/" + tool, withDestinationPath: RecordedProc.busybox)
            }
        }
        environment["PATH"] = tools
        return (RecordedProc.busybox, ["sh"], environment)
    }

    /// The line's program run as sshd runs the forced command, with `command` as the client's.
    func run(line: String, command: String?, shell: String) throws -> ProcessResult {
        let (path, words, environment) = try invocation(shell: shell, command: command)
        return try OCTunnelTestSupport.run(path, words + ["-c", try Self.program(of: line)], environment: environment)
    }

    /// The line's program started, not awaited.
    func start(line: String, command: String?, shell: String) throws -> RunningProcess {
        let (path, words, environment) = try invocation(shell: shell, command: command)
        return try RunningProcess(path, words + ["-c", try Self.program(of: line)], environment: environment)
    }

    /// A script of `AuthorizedKeysScript` run as `ssh you@vps /bin/sh -s` runs it.
    func run(script: String, shell: String) throws -> ProcessResult {
        let (path, words, environment) = try invocation(shell: shell, command: nil)
        return try OCTunnelTestSupport.run(path, words + ["-s"], stdin: script, environment: environment)
    }

    /// The forced command of a line, dequoted as sshd does (`\"` is a quote, anything else is
    /// itself; the value ends at the first bare quote).
    static func command(of line: String) throws -> String {
        let scalars = Array(line.unicodeScalars)
        let opening = Array("command=\"".unicodeScalars)
        guard
            let start = (0...(scalars.count - opening.count)).first(where: {
                Array(scalars[$0..<$0 + opening.count]) == opening
            })
        else {
            throw HarnessError("no command in \(line.prefix(80))")
        }
        var command = String.UnicodeScalarView()
        var index = start + opening.count
        while scalars[index] != "\"" {
            if scalars[index] == "\\", scalars[index + 1] == "\"" { index += 1 }
            command.append(scalars[index])
            index += 1
        }
        return String(command)
    }

    /// The program inside `exec /bin/sh -c '…'`.
    static func program(of line: String) throws -> String {
        let command = try command(of: line)
        let opening = "exec /bin/sh -c '"
        guard command.hasPrefix(opening), command.hasSuffix("'") else {
            throw HarnessError("not a program: \(command.prefix(80))")
        }
        return String(command.dropFirst(opening.count).dropLast())
    }

    /// A random Ed25519 public key (32 random bytes: the programs never use it as a key).
    static func ed25519(_ comment: String) -> SSHPublicKey {
        SSHPublicKey(ed25519: (0..<32).map { _ in UInt8.random(in: 0...255) }, comment: comment)
    }

    /// An RSA-shaped public key (e 65537, a 2048-bit n), and an ECDSA P-256 one.
    static func rsa() -> SSHPublicKey {
        var writer = SSHWireWriter()
        writer.string("ssh-rsa")
        writer.string([1, 0, 1] as [UInt8])
        writer.string([0] + (0..<256).map { _ in UInt8.random(in: 0...255) })
        return SSHPublicKey(type: "ssh-rsa", blob: writer.bytes, comment: "rsa")
    }

    static func ecdsa() -> SSHPublicKey {
        var writer = SSHWireWriter()
        writer.string("ecdsa-sha2-nistp256")
        writer.string("nistp256")
        writer.string([4] + (0..<64).map { _ in UInt8.random(in: 0...255) })
        return SSHPublicKey(type: "ecdsa-sha2-nistp256", blob: writer.bytes, comment: "ecdsa")
    }

    /// `type base64` of a key.
    static func typeAndBlob(_ key: SSHPublicKey) -> String {
        "\(key.type) \(Data(key.blob).base64EncodedString())"
    }
}
