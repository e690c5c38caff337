import Foundation

/// The Basic-auth user and password the health test sends to OpenCode, and where the password
/// came from. Its descriptions never contain the password.
public struct OpenCodeCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Where the password was read from, for messages ("--password-file ~/.oc-pass").
    public enum Source: Sendable, Equatable {
        /// `--password-file PATH`.
        case file(String)
        /// The password file saved with `--save` (config.json's `passwordFile`).
        case savedFile(String)
        /// An environment variable: `OPENCODE_PASSWORD` or the legacy `OPENCODE_SERVER_PASSWORD`.
        /// Set but empty, it means "no password", as OpenCode 2 reads it.
        case environment(String)
        /// OpenCode 2's background service's own file (`home up`, `OpenCodeServiceFiles`).
        case openCodeService(String)
    }

    /// The variables OpenCode 2's CLI reads for its password, in its order: `OPENCODE_PASSWORD`,
    /// then the legacy `OPENCODE_SERVER_PASSWORD` (packages/cli/src/env.ts upstream). The first
    /// one set decides, even when it is empty (empty turns the password off).
    public static let passwordVariables = ["OPENCODE_PASSWORD", "OPENCODE_SERVER_PASSWORD"]

    public let username: String
    public let password: String?
    /// Where the password came from; for no password, the empty variable that said so (or nil).
    public let source: Source?

    public init(username: String = "opencode", password: String? = nil, source: Source? = nil) {
        self.username = username
        self.password = password.flatMap { $0.isEmpty ? nil : $0 }
        switch (self.password, source) {
        case (nil, .environment?): self.source = source // the empty variable that turned it off
        case (nil, _): self.source = nil
        default: self.source = source
        }
    }

    /// The password from, in order: `--password-file`, the saved password file,
    /// `OPENCODE_PASSWORD`, `OPENCODE_SERVER_PASSWORD` (the first variable set decides; empty
    /// means no password). The user comes from `OPENCODE_SERVER_USERNAME` (default `opencode`,
    /// as OpenCode's own default).
    public static func load(
        passwordFile: String?, savedPasswordFile: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> OpenCodeCredentials {
        let user = environment["OPENCODE_SERVER_USERNAME"].flatMap { $0.isEmpty ? nil : $0 } ?? "opencode"
        if let passwordFile {
            return OpenCodeCredentials(
                username: user, password: try readPasswordFile(passwordFile), source: .file(passwordFile))
        }
        if let savedPasswordFile {
            return OpenCodeCredentials(
                username: user, password: try readPasswordFile(savedPasswordFile), source: .savedFile(savedPasswordFile)
            )
        }
        for name in passwordVariables {
            if let value = environment[name] {
                return OpenCodeCredentials(username: user, password: value, source: .environment(name))
            }
        }
        return OpenCodeCredentials(username: user)
    }

    /// Reads a password file as ssh reads a key: a regular file that only its owner can read;
    /// one trailing newline (LF or CRLF) is not part of the password. The file is opened once
    /// and checked (`fstat`) and read through that one descriptor: a file swapped in after the
    /// check is never the one read.
    public static func readPasswordFile(_ path: String) throws -> String {
        try readPasswordFile(path, afterCheck: {})
    }

    /// `readPasswordFile`, with `afterCheck` run between the checks and the read (tests swap the
    /// file at the path there).
    static func readPasswordFile(_ path: String, afterCheck: () -> Void) throws -> String {
        let limit = 65536
        let opened: OpenedFile?
        do {
            opened = try OpenedFile.open(path)
        } catch {
            throw LocalFileError.cannotRead(path: path, reason: error.errno.description)
        }
        guard let file = opened else { throw PasswordFileError.noPasswordFile(path: path) }
        guard file.isRegular else { throw PasswordFileError.badPasswordFile(path: path, reason: "not a regular file") }
        let mode = file.info.permissions & 0o777
        guard mode & 0o077 == 0 else {
            throw PasswordFileError.unsafePasswordFile(path: path, mode: mode, target: FileBytes.symlinkTarget(path))
        }
        guard file.info.size <= limit else {
            throw PasswordFileError.badPasswordFile(path: path, reason: "larger than 64 KiB")
        }
        afterCheck()
        let bytes: [UInt8]
        do {
            bytes = try file.readAll(limit: limit)
        } catch {
            if error.errno == .fileTooLarge {
                throw PasswordFileError.badPasswordFile(path: path, reason: "larger than 64 KiB")
            }
            throw LocalFileError.cannotRead(path: path, reason: error.errno.description)
        }
        let data = Data(bytes)
        guard var text = String(data: data, encoding: .utf8) else {
            throw PasswordFileError.badPasswordFile(path: path, reason: "not UTF-8 text")
        }
        if text.hasSuffix("\r\n") {
            text.removeLast(1)
        } // "\r\n" is one Character in Swift
        else if text.hasSuffix("\n") {
            text.removeLast()
        }
        guard !text.isEmpty else { throw PasswordFileError.badPasswordFile(path: path, reason: "it is empty") }
        guard !text.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else {
            throw PasswordFileError.badPasswordFile(path: path, reason: "it has more than one line")
        }
        return text
    }

    /// `Basic base64(user:password)`, or nil without a password.
    var authorization: String? {
        password.map { "Basic " + Data("\(username):\($0)".utf8).base64EncodedString() }
    }

    /// The password and the Authorization token: what a server may echo and must never be shown.
    var secrets: [String] {
        [password, authorization.map { String($0.dropFirst(6)) }].compactMap { $0 }
    }

    /// Replaces the password and the Authorization token in `text` (a server may echo them).
    func redact(_ text: String) -> String {
        OutsideText.redacting(text, secrets: secrets)
    }

    /// Where the password came from, as a user would write it.
    public var sourceText: String {
        switch source {
        case .file(let path): return "--password-file \(path)"
        case .savedFile(let path): return "the saved password file \(path)"
        case .environment(let name): return name
        case .openCodeService(let path): return "OpenCode's service file \(path)"
        case nil: return "no password"
        }
    }

    /// What the health test used, for its report: "password from OPENCODE_PASSWORD", "no
    /// password (OPENCODE_PASSWORD is empty)" or "no password". Never the password itself.
    public var usedText: String {
        switch (password, source) {
        case (nil, .environment(let name)): return "no password (\(name) is empty)"
        case (nil, _): return "no password"
        default: return "password from \(sourceText)"
        }
    }

    public var description: String { "user \(username), \(usedText)" }
    public var debugDescription: String { description }
}
