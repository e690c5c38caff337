import Foundation
import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// docs/cli.md's "Exit codes" table, `octunnel --help` and the core's `ExitStatus` say the same.
@Suite("The exit codes: one table behind --help and docs/cli.md", .ownThreads)
struct ExitCodeTableTests {
    /// The (code, name) rows of docs/cli.md's "## Exit codes" table, in order.
    static func documentedCodes() throws -> [(code: Int32, name: String)] {
        let text = try String(contentsOfFile: Octunnel.packageRoot + "/docs/cli.md", encoding: .utf8)
        let section = try #require(
            text.components(separatedBy: "\n## Exit codes\n").dropFirst().first,
            "docs/cli.md has no \"## Exit codes\" section")
        let table = section.components(separatedBy: "\n## ").first ?? section
        return table.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count > 3, let code = Int32(cells[1]) else { return nil }
            return (code, cells[2])
        }
    }

    @Test func docsCliTableHasExactlyTheCoresCodesAndNames() throws {
        let documented = try Self.documentedCodes()
        let core = ExitStatus.allCases.map { (code: $0.rawValue, name: $0.documentation.name) }
        #expect(documented.map(\.code) == core.map(\.code), "docs/cli.md's codes differ from ExitStatus's")
        #expect(
            documented.map(\.name) == core.map(\.name), "docs/cli.md's names differ from ExitStatus.documentation's")
    }

    @Test("--help lists every documented code with its own words, in the table's order")
    func helpListsEveryDocumentedCode() throws {
        try withTemporaryDirectory { dir in
            let help = try Octunnel.run(["--help"], in: dir)
            #expect(help.status == 0)
            // The parser wraps the discussion at the terminal's width: compare it unwrapped.
            let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let listed = text.components(separatedBy: "Exit codes: ").dropFirst().first ?? ""
            let documented = try Self.documentedCodes()
            #expect(!documented.isEmpty)
            // Each row as --help must say it: its own code with its own words, in the table's
            // order ("3 not running (status)"), not any number somewhere in the text.
            var rows: [String] = []
            for row in documented {
                let status = try #require(
                    ExitStatus(rawValue: row.code), "docs/cli.md lists \(row.code), which ExitStatus does not have")
                rows.append(
                    "\(row.code) \(status.documentation.help)".split(whereSeparator: \.isWhitespace).joined(
                        separator: " "))
            }
            #expect(
                listed.hasPrefix(rows.joined(separator: ", ") + ". See docs/cli.md."), "--help's exit codes: \(listed)")
            for row in rows {
                #expect(
                    listed.hasPrefix(row + ", ") || listed.contains(", " + row + ", ")
                        || listed.contains(", " + row + ". "),
                    "--help does not list \"\(row)\"")
            }
        }
    }

    @Test func versionIsTheCoresVersion() throws {
        try withTemporaryDirectory { dir in
            let version = try Octunnel.run(["--version"], in: dir)
            #expect(version.status == 0)
            #expect(version.stdout == OCTunnelVersion.current + " (libssh2 \(libssh2Version()))\n")
        }
    }

    @Test(
        "the version moves: the release at its own commit, else release+gitYYYYMMDDHHMMSS.HASH, as scripts/version.sh says now; after every build that said 0.1.0"
    )
    func theVersionMoves() throws {
        let current = OCTunnelVersion.current
        let release = OCTunnelVersion.release
        let between = try Regex(#"[0-9.]+\+git[0-9]{14}\.[0-9a-f]{7,}"#)
        #expect(
            current == release || current.wholeMatch(of: between) != nil && current.hasPrefix(release + "+git"),
            "\(current)")
        let script = try run("/bin/sh", [Octunnel.packageRoot + "/scripts/version.sh"])
        #expect(
            script.status == 0 && script.stdout == current + "\n",
            "built as \(current), scripts/version.sh says \(script.stdout)\(script.stderr)")
        let sorts = try run("/usr/bin/dpkg", ["--compare-versions", current, "gt", "0.1.0"])
        #expect(sorts.status == 0, "\(current) does not sort after 0.1.0")
    }
}

/// The libssh2 version this machine's library reports, read by its own pkg-config file.
private func libssh2Version() -> String {
    (try? run("/usr/bin/pkg-config", ["--modversion", "libssh2"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        ?? "?"
}
