import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Whatever differs between Linux and macOS sits in Sources/OCTunnelCore/System/ (issue 27):
/// no other source file imports Glibc, calls `Glibc.` anything or names Darwin. That is what
/// keeps a macOS build one step away.
@Suite("the syscall seam: only System/ names Glibc or Darwin", .ownThreads)
struct SyscallSeamTests {
    /// The one folder that may name either platform.
    static let systemFolder = "Sources/OCTunnelCore/System/"

    /// Files allowed to name a platform outside System/ for now: none.
    static let notYetConverted: Set<String> = []

    /// The package root: three folders up from this file (Tests/OCTunnelCoreTests/…).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Every line of a .swift file under `root`/Sources, outside System/ and not in `allowed`,
    /// that names a platform: "path:line: text".
    static func platformNames(under root: String, allowed: Set<String>) throws -> (files: Int, found: [String]) {
        let sources = root + "/Sources"
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources).filter { $0.hasSuffix(".swift") }.sorted()
        var found: [String] = []
        for file in files {
            let path = "Sources/" + file
            if path.hasPrefix(systemFolder) || allowed.contains(path) { continue }
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("import Glibc") || line.contains("Glibc.") || line.contains("Darwin") {
                found.append("\(path):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return (files.count, found)
    }

    @Test("no source file outside System/ imports Glibc, calls Glibc. or names Darwin")
    func onlySystemNamesThePlatform() throws {
        let (files, found) = try Self.platformNames(under: Self.root, allowed: Self.notYetConverted)
        #expect(files > 50, "found no sources under \(Self.root)/Sources")
        #expect(found.isEmpty, "platform names outside \(Self.systemFolder) (put the call in System/):\n\(found.joined(separator: "\n"))")
    }

    @Test("the check fails on a file outside System/, naming the file and line; System/ and allowed files pass")
    func checkCanFail() throws {
        let tree = try TempDirectory("seam")
        for folder in ["Sources/OCTunnelCore/System", "Sources/OCTunnelCore/Engine", "Sources/octunnel"] {
            try FileManager.default.createDirectory(atPath: tree.file(folder), withIntermediateDirectories: true)
        }
        try tree.write("Sources/OCTunnelCore/System/Calls.swift", "#if canImport(Glibc)\nimport Glibc\n#elseif canImport(Darwin)\nimport Darwin\n#endif\n")
        try tree.write("Sources/OCTunnelCore/Engine/Clean.swift", "import Foundation\nlet x = Syscall.close(3)\n")
        try tree.write("Sources/OCTunnelCore/Engine/Allowed.swift", "import Glibc\n")
        try tree.write("Sources/OCTunnelCore/Engine/Loop.swift", "import Foundation\n\nlet ready = Glibc.poll(&fds, 1, 0)\n")
        try tree.write("Sources/octunnel/Main.swift", "#if canImport(Glibc)\nimport Glibc\n#endif\n")
        let (files, found) = try Self.platformNames(under: tree.path, allowed: ["Sources/OCTunnelCore/Engine/Allowed.swift"])
        #expect(files == 5)
        #expect(found == [
            "Sources/OCTunnelCore/Engine/Loop.swift:3: let ready = Glibc.poll(&fds, 1, 0)",
            "Sources/octunnel/Main.swift:2: import Glibc",
        ])
    }
}
