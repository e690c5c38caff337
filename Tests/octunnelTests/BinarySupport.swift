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
    let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("octunnel-cli-XXXXXX")
    var buffer = Array(template.utf8CString)
    guard let made = mkdtemp(&buffer) else { throw HarnessError("mkdtemp \(template): \(String(cString: strerror(errno)))") }
    let path = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// What a finished process left behind: its exit status and, separately, stdout and stderr.
struct ToolResult: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// Runs a program to completion with stdin empty, capturing stdout and stderr through files
/// (so neither can fill a pipe and stall it).
@discardableResult
func run(_ tool: String, _ arguments: [String], environment: [String: String], in directory: String? = nil) throws -> ToolResult {
    try withTemporaryDirectory { dir in
        let outPath = dir + "/stdout", errPath = dir + "/stderr"
        try Data().write(to: URL(fileURLWithPath: outPath))
        try Data().write(to: URL(fileURLWithPath: errPath))
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        defer { try? out.close(); try? err.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = environment
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        return ToolResult(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self)
        )
    }
}

/// The octunnel binary this package built, run the way a user runs it.
enum Octunnel {
    /// The built `octunnel`: beside this test runner (same build configuration), else
    /// `.build/debug/octunnel` under the package root, else wherever `swift build` puts it.
    static let path: String? = {
        var candidates: [String] = []
        if let runner = Bundle.main.executableURL {
            candidates.append(runner.deletingLastPathComponent().appendingPathComponent("octunnel").path)
        }
        candidates.append(packageRoot + "/.build/debug/octunnel")
        if let found = candidates.first(where: { access($0, X_OK) == 0 }) { return found }
        let environment = ProcessInfo.processInfo.environment
        guard let shown = try? octunnelTests.run("/usr/bin/env", ["swift", "build", "--show-bin-path"], environment: environment, in: packageRoot),
              shown.status == 0 else { return nil }
        let path = shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/octunnel"
        return access(path, X_OK) == 0 ? path : nil
    }()

    /// The directory holding Package.swift, found by walking up from this file.
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
            url.deleteLastPathComponent()
        }
        return FileManager.default.currentDirectoryPath
    }()

    /// A minimal environment with no octunnel variables, so only what a test sets counts.
    static func environment(home: String, _ extra: [String: String] = [:]) -> [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"].merging(extra) { $1 }
    }

    /// Runs `octunnel ARGUMENTS` with `environment` (by default: HOME=`dir`, nothing else set).
    static func run(_ arguments: [String], in dir: String, environment: [String: String]? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> ToolResult {
        let binary = try #require(path, "the octunnel binary was not found; run `swift build` first", sourceLocation: sourceLocation)
        return try octunnelTests.run(binary, arguments, environment: environment ?? Self.environment(home: dir), in: dir)
    }
}

/// Runs the real ssh-keygen and requires it to succeed.
@discardableResult
func sshKeygen(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ToolResult {
    let result = try run("/usr/bin/ssh-keygen", arguments, environment: ["PATH": "/usr/bin:/bin"])
    try #require(result.status == 0, "ssh-keygen \(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    return result
}

/// The SHA256 fingerprint ssh-keygen -l reports for a key file.
func sshKeygenFingerprint(_ path: String) throws -> String {
    let listed = try sshKeygen(["-l", "-E", "sha256", "-f", path]).stdout
    let fields = listed.split(separator: " ")
    guard fields.count >= 2 else { throw HarnessError("unexpected ssh-keygen -l output: \(listed)") }
    return String(fields[1])
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

func readText(_ path: String) throws -> String {
    String(decoding: try readBytes(path), as: UTF8.self)
}

func writeText(_ text: String, to path: String, mode: mode_t = 0o600) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    try setMode(mode, of: path)
}

func setMode(_ mode: mode_t, of path: String) throws {
    guard chmod(path, mode) == 0 else { throw HarnessError("chmod \(path): \(String(cString: strerror(errno)))") }
}

func mode(of path: String) throws -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { throw HarnessError("stat \(path): \(String(cString: strerror(errno)))") }
    return info.st_mode & 0o7777
}

func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
