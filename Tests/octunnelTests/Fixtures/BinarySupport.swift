import Foundation
import OCTunnelTestSupport
import Testing
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The octunnel binary this package built, run the way a user runs it.
enum Octunnel {
    /// The built `octunnel`: `OCTUNNEL_BINARY` when set, else beside this test runner (same build configuration), else
    /// `.build/debug/octunnel` under the package root, else wherever `swift build` puts it.
    static let path: String? = {
        if let chosen = ProcessInfo.processInfo.environment["OCTUNNEL_BINARY"], !chosen.isEmpty { return chosen }
        var candidates: [String] = []
        if let runner = Bundle.main.executableURL {
            candidates.append(runner.deletingLastPathComponent().appendingPathComponent("octunnel").path)
        }
        candidates.append(packageRoot + "/.build/debug/octunnel")
        if let found = candidates.first(where: { access($0, X_OK) == 0 }) { return found }
        let environment = ProcessInfo.processInfo.environment
        guard
            let shown = try? OCTunnelTestSupport.run(
                "/usr/bin/env", ["swift", "build", "--show-bin-path"], environment: environment, in: packageRoot),
            shown.status == 0
        else { return nil }
        let path = shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/octunnel"
        return access(path, X_OK) == 0 ? path : nil
    }()

    /// The directory holding Package.swift, found by walking up from this file.
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url.path
            }
            url.deleteLastPathComponent()
        }
        return FileManager.default.currentDirectoryPath
    }()

    /// A minimal environment with no octunnel variables, so only what a test sets counts.
    static func environment(home: String, _ extra: [String: String] = [:]) -> [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"].merging(extra) { $1 }
    }

    /// Runs `octunnel ARGUMENTS` with `environment` (by default: HOME=`dir`, nothing else set).
    static func run(
        _ arguments: [String], in dir: String, environment: [String: String]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessResult {
        let binary = try #require(
            path, "the octunnel binary was not found; run `swift build` first", sourceLocation: sourceLocation)
        return try OCTunnelTestSupport.run(
            binary, arguments, environment: environment ?? Self.environment(home: dir), in: dir)
    }
}

/// The SHA256 fingerprint ssh-keygen -l reports for a key file.
func sshKeygenFingerprint(_ path: String) throws -> String {
    let listed = try sshKeygen(["-l", "-E", "sha256", "-f", path]).stdout
    let fields = listed.split(separator: " ")
    guard fields.count >= 2 else { throw HarnessError("unexpected ssh-keygen -l output: \(listed)") }
    return String(fields[1])
}
