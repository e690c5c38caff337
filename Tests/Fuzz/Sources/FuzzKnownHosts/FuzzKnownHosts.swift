import Foundation
import OCTunnelCore

/// Reads each input as a whole known_hosts file. The store promises to keep every byte it does
/// not mean to change, so: parsing and writing back gives the same bytes; removing an absent
/// name changes nothing; removing a name the file holds takes out exactly its entries (or its
/// literal from a host list) and keeps every other byte, and afterwards nothing names it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let file = KnownHostsFile(bytes: bytes)
    precondition(file.bytes == bytes, "parse and write back changed the bytes")
    precondition(file.lines.map(\.number) == Array(1..<(file.lines.count + 1)), "line numbers are not 1...n")

    // Absent unless the fuzzer wrote it in (it learns the name from the comparisons it sees).
    if !file.entries.contains(where: { $0.1.match("absent.invalid") == .exact }) {
        var unchanged = file
        let none = unchanged.remove(name: "absent.invalid")
        precondition(none.removed == 0 && unchanged.bytes == bytes, "removing an absent name changed the file")
    }

    var names: Set<String> = []
    for (_, entry) in file.entries {
        _ = entry.fingerprint
        _ = entry.displayHosts
        _ = entry.match("[Host]:2222")
        for pattern in entry.hostPatterns where names.count < 8 {
            names.insert(String(pattern))
            names.insert(String(pattern).lowercased())
        }
    }
    for name in names { checkRemoval(of: name, from: file) }
    return 0
}

/// `remove(name:)` against a plain restatement of what it promises, byte for byte.
private func checkRemoval(of name: String, from file: KnownHostsFile) {
    var after = file
    let removal = after.remove(name: name)
    var expected: [UInt8] = []
    var removed = 0
    var patternLines: [Int] = []
    let lowered = name.lowercased()
    for (index, line) in file.lines.enumerated() {
        let terminator: [UInt8] = index < file.lines.count - 1 || file.endsWithNewline ? [0x0A] : []
        guard let entry = line.entry, entry.marker == nil else {
            expected += line.raw + terminator
            continue
        }
        switch entry.match(name) {
        case .none, .negated:
            expected += line.raw + terminator
        case .pattern:
            patternLines.append(line.number)
            expected += line.raw + terminator
        case .exact:
            removed += 1
            guard !entry.isHashed else { continue }
            let others = entry.hostPatterns.filter { $0.lowercased() != lowered }
            guard !others.isEmpty else { continue }
            guard let at = firstRange(of: Array(entry.hosts.utf8), in: line.raw) else {
                preconditionFailure("hosts field not in its line")
            }
            expected +=
                line.raw[..<at.lowerBound] + Array(others.joined(separator: ",").utf8) + line.raw[at.upperBound...]
                + terminator
        }
    }
    // A removed last line without a newline: the line before keeps the newline it had.
    if let last = file.lines.last, !file.endsWithNewline, !expected.isEmpty, expected.last != 0x0A,
        after.lines.last?.number != last.number
    {
        expected.append(0x0A)
    }
    // A closure: precondition messages are only built on failure, and this one is not cheap.
    let context = { "removing \(debug(name)) from \(debug(file.bytes))" }
    precondition(removal.removed == removed, "\(context()): said \(removal.removed) removed, \(removed) expected")
    precondition(
        removal.keptPatternLines == patternLines,
        "\(context()): pattern lines \(removal.keptPatternLines) != \(patternLines)")
    precondition(after.bytes == expected, "\(context()): gave \(debug(after.bytes)), expected \(debug(expected))")
    for (line, entry) in KnownHostsFile(bytes: after.bytes).entries where entry.marker == nil {
        precondition(entry.match(name) != .exact, "\(context()): line \(line) still names it")
    }
}

private func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
    guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle)
    {
        return start..<start + needle.count
    }
    return nil
}

private func debug(_ text: String) -> String { debug(Array(text.utf8)) }

/// Bytes in hex, so a failure message can be replayed exactly.
private func debug(_ bytes: [UInt8]) -> String {
    "[\(bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())]"
}
