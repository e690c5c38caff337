import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure of the test harness itself (not of the code under test).
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh private directory, removed afterwards whatever happens.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("octunnel-test-XXXXXX")
    var buffer = Array(template.utf8CString)
    guard let made = mkdtemp(&buffer) else { throw HarnessError("mkdtemp \(template): \(String(cString: strerror(errno)))") }
    let path = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// What a finished external tool left behind.
struct ToolResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs a tool to completion, stdin empty, stdout and stderr captured separately through files
/// (so neither can fill a pipe and stall the tool).
@discardableResult
func run(_ tool: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ToolResult {
    try withTemporaryDirectory { dir in
        let outPath = dir + "/stdout", errPath = dir + "/stderr"
        try writeBytes([], to: outPath)
        try writeBytes([], to: errPath)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        defer { try? out.close(); try? err.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        return ToolResult(
            status: process.terminationStatus,
            stdout: String(decoding: try readBytes(outPath), as: UTF8.self),
            stderr: String(decoding: try readBytes(errPath), as: UTF8.self)
        )
    }
}

let sshKeygen = "/usr/bin/ssh-keygen"

/// Runs ssh-keygen and requires it to succeed.
@discardableResult
func sshKeygenOK(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ToolResult {
    let result = try run(sshKeygen, arguments)
    try #require(result.status == 0, "ssh-keygen \(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    return result
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func readText(_ path: String) throws -> String {
    String(decoding: try readBytes(path), as: UTF8.self)
}

func writeBytes(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    try setMode(mode, of: path)
}

func writeText(_ text: String, to path: String, mode: mode_t = 0o600) throws {
    try writeBytes(Array(text.utf8), to: path, mode: mode)
}

func setMode(_ mode: mode_t, of path: String) throws {
    guard chmod(path, mode) == 0 else { throw HarnessError("chmod \(path): \(String(cString: strerror(errno)))") }
}

/// The permission bits of `path` (after following symlinks).
func mode(of path: String) throws -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { throw HarnessError("stat \(path): \(String(cString: strerror(errno)))") }
    return info.st_mode & 0o7777
}

func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
