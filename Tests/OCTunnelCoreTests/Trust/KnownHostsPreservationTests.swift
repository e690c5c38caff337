import Foundation
import OCTunnelTestSupport
import OCTunnelCore
import Testing

/// A known_hosts file built from whole lines (terminators included), so a test can say exactly
/// which bytes must remain.
struct KnownHostsFixture {
    var lines: [[UInt8]] = []

    mutating func add(_ text: String) { lines.append(Array(text.utf8)) }
    mutating func add(bytes: [UInt8]) { lines.append(bytes) }

    var bytes: [UInt8] { lines.flatMap { $0 } }

    func bytes(without index: Int) -> [UInt8] {
        lines.enumerated().filter { $0.offset != index }.flatMap { $0.element }
    }

    func bytes(replacing index: Int, with text: String) -> [UInt8] {
        var copy = lines
        copy[index] = Array(text.utf8)
        return copy.flatMap { $0 }
    }

    /// A known_hosts store in `dir` whose file holds these bytes.
    func store(in dir: String) throws -> KnownHostsStore {
        let store = KnownHostsStore(path: dir + "/known_hosts")
        try writeBytes(bytes, to: store.path)
        return store
    }
}

@Suite("Known hosts: every byte we do not mean to change stays", .ownThreads)
struct KnownHostsPreservationTests {
    /// Comments, blanks, CRLF, markers, unknown types, bad base64, non-UTF-8, 1,000 malformed lines
    /// and no final newline, with one plain entry for [vps.example.com]:2222; returns its index.
    static func messyFile(key: SSHPublicKey, others: SSHPublicKey) -> (fixture: KnownHostsFixture, target: Int) {
        var file = KnownHostsFixture()
        file.add("# known_hosts kept by hand\n")
        file.add("\n")
        file.add("   \t \n")
        file.add(knownHostsLine("vps.example.com", others) + " port 22 stays\n")
        file.add(knownHostsLine("[127.0.0.1]:2222", others) + "\r\n")
        file.add("# a CRLF comment\r\n")
        file.add("@cert-authority " + knownHostsLine("*.example.com", others) + "\n")
        file.add("@revoked " + knownHostsLine("[vps.example.com]:2222", others) + "\n")
        var unknownType = [UInt8]([0, 0, 0, 15]) + Array("ssh-unknowntype".utf8)
        unknownType += [0, 0, 0, 3, 1, 2, 3]
        file.add("vps2 ssh-unknowntype \(Data(unknownType).base64EncodedString())\n")
        file.add("vps3 ssh-ed25519 !!!not*base64!!!\n")
        file.add(bytes: [0xFF, 0xFE] + Array(" ssh-ed25519 AAAA \u{00e9}".utf8) + [0xC3, 0x28, 0x0A])
        file.add(
            HashedHostName.hash("[vps.example.com]:2200", salt: Array(repeating: 9, count: 20)) + " "
                + "\(others.type) \(Data(others.blob).base64EncodedString())\n")
        let target = file.lines.count
        file.add(knownHostsLine("[vps.example.com]:2222", key) + "\n")
        for index in 0..<1000 {
            switch index % 6 {
            case 0: file.add("malformed line \(index)\n")
            case 1: file.add("[vps.example.com]:2222 ssh-ed25519\n")
            case 2: file.add("[vps.example.com]:2222 ssh-ed25519 AAAA=\(index)\n")
            case 3:
                file.add("@unknown-marker [vps.example.com]:2222 ssh-ed25519 \(Data(key.blob).base64EncodedString())\n")
            case 4: file.add("[vps.example.com]:2222 ssh-rsa \(Data(key.blob).base64EncodedString())\r\n")
            default: file.add(bytes: [0x80 | UInt8(index % 64)] + Array(" [vps.example.com]:2222\n".utf8))
            }
        }
        file.add(knownHostsLine("last.example.com", others) + " no newline after me")
        return (file, target)
    }

    @Test func removingOneEntryFromAMessyFileRemovesExactlyThatLine() throws {
        try withTemporaryDirectory { dir in
            let (fixture, target) = Self.messyFile(key: try newHostKey(), others: try newHostKey())
            let store = try fixture.store(in: dir)
            #expect(try store.load().malformed.count == 1002)
            #expect(try store.load().bytes == fixture.bytes)

            let removal = try store.remove(host: "vps.example.com", port: 2222)

            #expect(removal.removed == 1)
            #expect(removal.keptPatternLines.isEmpty)
            let after = try readBytes(store.path)
            #expect(after.count == fixture.bytes.count - fixture.lines[target].count)
            #expect(after == fixture.bytes(without: target))
        }
    }

    @Test func removingACRLFEntryTakesItsCarriageReturnAlong() throws {
        try withTemporaryDirectory { dir in
            let (fixture, _) = Self.messyFile(key: try newHostKey(), others: try newHostKey())
            let store = try fixture.store(in: dir)

            #expect(try store.remove(host: "127.0.0.1", port: 2222).removed == 1)

            #expect(try readBytes(store.path) == fixture.bytes(without: 4))
        }
    }

    @Test func recordAppendsAndKeepsEveryPriorByte() throws {
        try withTemporaryDirectory { dir in
            let (fixture, _) = Self.messyFile(key: try newHostKey(), others: try newHostKey())
            let store = try fixture.store(in: dir)
            let key = try newHostKey()

            try store.record(host: "new.test", port: 2200, key: key)

            let line = Array((knownHostsLine("[new.test]:2200", key) + "\n").utf8)
            #expect(try readBytes(store.path) == fixture.bytes + [0x0A] + line)
            #expect(try store.verdict(host: "new.test", port: 2200, key: key) == .trusted)
        }
    }

    @Test func recordAfterAFinalNewlineAddsNoBlankLine() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            let prior = "# mine\r\n" + knownHostsLine("a", try newHostKey()) + "\n"
            try writeText(prior, to: store.path)
            let key = try newHostKey()

            try store.record(host: "b", port: 22, key: key)

            #expect(try readText(store.path) == prior + knownHostsLine("b", key) + "\n")
        }
    }

    @Test func removingANameFromAHostListKeepsTheOtherNames() throws {
        try withTemporaryDirectory { dir in
            let key = try newHostKey()
            let base64 = Data(key.blob).base64EncodedString()
            var fixture = KnownHostsFixture()
            fixture.add("# before\n")
            fixture.add("vps,1.2.3.4 ssh-ed25519 \(base64) my vps\n")
            fixture.add("vps,[vps]:2222\tssh-ed25519 \(base64)\r\n")
            fixture.add("# after")
            let store = try fixture.store(in: dir)

            let removal = try store.remove(host: "vps", port: 22)

            #expect(removal.removed == 2)
            var expected = fixture
            expected.lines[1] = Array("1.2.3.4 ssh-ed25519 \(base64) my vps\n".utf8)
            expected.lines[2] = Array("[vps]:2222\tssh-ed25519 \(base64)\r\n".utf8)
            #expect(try readBytes(store.path) == expected.bytes)
            #expect(try store.verdict(host: "1.2.3.4", port: 22, key: key) == .trusted)
            #expect(try store.verdict(host: "vps", port: 2222, key: key) == .trusted)
            #expect(try store.verdict(host: "vps", port: 22, key: key) == .unknown)
        }
    }

    @Test func wildcardEntriesAreKeptAndReported() throws {
        try withTemporaryDirectory { dir in
            let key = try newHostKey()
            var fixture = KnownHostsFixture()
            fixture.add(knownHostsLine("*.example.com", key) + "\n")
            fixture.add(knownHostsLine("vps.example.com", key) + "\n")
            fixture.add(knownHostsLine("db.example.com", key) + "\n")
            let store = try fixture.store(in: dir)

            let removal = try store.remove(host: "vps.example.com", port: 22)

            #expect(removal.removed == 1)
            #expect(removal.keptPatternLines == [1])
            #expect(try readBytes(store.path) == fixture.bytes(without: 1))
        }
    }

    @Test func removingWhatIsNotThereChangesNothing() throws {
        try withTemporaryDirectory { dir in
            let (fixture, _) = Self.messyFile(key: try newHostKey(), others: try newHostKey())
            let store = try fixture.store(in: dir)

            for (host, port) in [("absent.test", 22), ("vps.example.com", 2201), ("::1", 2222)] {
                let removal = try store.remove(host: host, port: port)
                #expect(removal.removed == 0)
                #expect(removal.keptPatternLines.isEmpty)
            }
            let onlyAPattern = try store.remove(host: "x.example.com", port: 22)
            #expect(onlyAPattern.removed == 0)

            #expect(try readBytes(store.path) == fixture.bytes)
        }
    }

    @Test func removingFromAnAbsentFileIsANoOpThatCreatesNothing() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/not-yet/known_hosts")

            let removal = try store.remove(host: "vps", port: 22)

            #expect(removal.removed == 0)
            #expect(!fileExists(dir + "/not-yet"))
        }
    }

    @Test func removingHashedEntriesRemovesOnlyThoseForTheName() throws {
        try withTemporaryDirectory { dir in
            let key = try newHostKey()
            var fixture = KnownHostsFixture()
            fixture.add(
                knownHostsLine(HashedHostName.hash("[::1]:2222", salt: Array(repeating: 1, count: 20)), key) + "\n")
            fixture.add(knownHostsLine(HashedHostName.hash("::1", salt: Array(repeating: 2, count: 20)), key) + "\n")
            fixture.add(knownHostsLine("[::1]:2222", key) + "\n")
            let store = try fixture.store(in: dir)

            #expect(try store.remove(host: "::1", port: 2222).removed == 2)

            #expect(try readBytes(store.path) == fixture.lines[1])
        }
    }

    @Test func removingTheLastLineOfAFileWithoutAFinalNewlineKeepsTheLineBefore() throws {
        try withTemporaryDirectory { dir in
            let key = try newHostKey()
            var fixture = KnownHostsFixture()
            fixture.add("# first\n")
            fixture.add(knownHostsLine("keep", key) + "\n")
            fixture.add(knownHostsLine("gone", key))
            let store = try fixture.store(in: dir)

            #expect(try store.remove(host: "gone", port: 22).removed == 1)

            #expect(try readBytes(store.path) == fixture.bytes(without: 2))
        }
    }

    @Test func removingEveryEntryLeavesAnEmptyFile() throws {
        try withTemporaryDirectory { dir in
            let store = KnownHostsStore(path: dir + "/known_hosts")
            try writeText(knownHostsLine("[vps]:2222", try newHostKey()), to: store.path)

            #expect(try store.remove(host: "vps", port: 2222).removed == 1)

            #expect(try readBytes(store.path) == [])
        }
    }

    @Test func parsingAndReserialisingIsIdentityOnOddInputs() {
        let inputs: [[UInt8]] = [
            [], [0x0A], [0x0A, 0x0A], Array("a".utf8), Array("a\r\n".utf8), [0xFF, 0x0A, 0xFE], Array("\n\nx\n".utf8),
        ]
        for input in inputs {
            #expect(KnownHostsFile(bytes: input).bytes == input, "\(input)")
        }
    }

    // Found while fixing the target parser's grapheme bugs, reproduced with FuzzKnownHosts's removal
    // property: a Unicode-aware String search for the host field matched the blank before a
    // combining mark too, and dropped it.
    @Test func rewritingAHostListKeepsTheBlankBeforeACombiningMark() throws {
        let key = try newHostKey()
        var file = KnownHostsFile(bytes: Array((" \u{301}x,y " + knownHostsLine("", key).dropFirst() + "\n").utf8))

        #expect(file.remove(name: "y").removed == 1)

        #expect(file.bytes == Array((" \u{301}x " + knownHostsLine("", key).dropFirst() + "\n").utf8))
    }

    // Found while fixing the above: `,` followed by a combining mark is still OpenSSH's separator.
    @Test func aCommaBeforeACombiningMarkStillSeparatesHosts() throws {
        let key = try newHostKey()
        var file = KnownHostsFile(bytes: Array((knownHostsLine("a,\u{301}b", key) + "\n").utf8))

        #expect(file.entries.first?.entry.match("a") == .exact)
        #expect(file.remove(name: "a").removed == 1)

        #expect(file.bytes == Array((knownHostsLine("\u{301}b", key) + "\n").utf8))
    }

    // Found with the above: `!` followed by a combining mark still negates the pattern.
    @Test func aBangBeforeACombiningMarkStillNegates() throws {
        let file = KnownHostsFile(bytes: Array(knownHostsLine("*,!\u{301}b", try newHostKey()).utf8))

        #expect(file.entries.first?.entry.match("\u{301}b") == .negated)
        #expect(file.entries.first?.entry.match("c") == .pattern)
    }
}
