import Foundation
import Testing

/// Whether this run is CI's (`CI` set and not empty, as `.ci/run` and `scripts/test.sh` set it):
/// there a missing tool is a failure, since the machine is meant to have every one.
public var isCI: Bool { !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty }

/// A tool the test cannot run without. Missing: the test is cancelled with `why` (a visible
/// skip, on stderr and in the result, never a `return` that passes), or fails when `isCI`.
public func requireTool(
    _ path: String, _ why: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    guard !FileManager.default.isExecutableFile(atPath: path) else { return }
    let reason = "\(path) is not installed: \(why)"
    FileHandle.standardError.write(Data("skipped: \(reason)\n".utf8))
    if isCI { throw MissingTool(reason: reason + " (CI must have it)") }
    try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
}

/// The error a test ends with when CI lacks a tool (`requireTool`).
public struct MissingTool: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
