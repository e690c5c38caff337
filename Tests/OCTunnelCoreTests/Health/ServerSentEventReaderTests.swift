import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("the SSE reader: every field, every line end, any split", .ownThreads)
struct ServerSentEventReaderTests {
    /// A stream using every rule: a BOM, comments (2.x's heartbeat), event/id/retry fields, a field
    /// without a colon, a value without the optional space, multi-line data, a frame without data
    /// (dispatches nothing), an empty data line, non-ASCII text (2- 3- and 4-byte UTF-8).
    static let lines: [String] = [
        "\u{FEFF}: opening comment",
        "data: {\"payload\":{\"type\":\"server.connected\",\"properties\":{}}}",
        "",
        ": heartbeat",
        "",
        "event: update",
        "id: 7",
        "retry: 2500",
        "data:first line",
        "data: second é line",
        "data",
        "",
        "id: 8",
        "",
        "data: {\"id\":\"evt_1\",\"type\":\"server.connected\",\"data\":{}}",
        "retry: soon",
        "",
        "data: 日本語 and 🦊",
        "",
    ]

    static let expected: [ServerSentEvent] = [
        ServerSentEvent(data: "{\"payload\":{\"type\":\"server.connected\",\"properties\":{}}}"),
        ServerSentEvent(type: "update", data: "first line\nsecond é line\n", lastEventID: "7", retry: 2500),
        ServerSentEvent(data: "{\"id\":\"evt_1\",\"type\":\"server.connected\",\"data\":{}}", lastEventID: "8"),
        ServerSentEvent(data: "日本語 and 🦊", lastEventID: "8"),
    ]

    static func stream(_ end: String) -> [UInt8] {
        Array(lines.joined(separator: end).utf8) + Array(end.utf8)
    }

    static func read(_ pieces: [ArraySlice<UInt8>]) throws -> [ServerSentEvent] {
        var reader = ServerSentEventReader()
        var events: [ServerSentEvent] = []
        for piece in pieces { events += try reader.feed(piece) }
        return events
    }

    @Test("LF, CRLF and CR line ends give the same events", arguments: ["\n", "\r\n", "\r"])
    func wholeStream(end: String) throws {
        #expect(try Self.read([Self.stream(end)[...]]) == Self.expected)
    }

    @Test(
        "a split at every byte offset (inside CRLF, inside a UTF-8 character) changes nothing",
        arguments: ["\n", "\r\n", "\r"])
    func everySplit(end: String) throws {
        let bytes = Self.stream(end)
        for offset in 0...bytes.count {
            let events = try Self.read([bytes[..<offset], bytes[offset...]])
            #expect(events == Self.expected, "split at byte \(offset) of \(bytes.count)")
        }
        let oneByteAtATime = try Self.read(bytes.indices.map { bytes[$0...$0] })
        #expect(oneByteAtATime == Self.expected)
    }

    @Test("events come out as soon as their blank line arrives, not later")
    func incremental() throws {
        var reader = ServerSentEventReader()
        #expect(try reader.feed(Array("data: a\n".utf8)).isEmpty)
        #expect(try reader.feed(Array("\n".utf8)) == [ServerSentEvent(data: "a")])
        #expect(try reader.feed(Array("data: b\r".utf8)).isEmpty)
        // The CR ended the line; the blank line is the next line end, which may be an LF after CR.
        #expect(try reader.feed(Array("\r".utf8)) == [ServerSentEvent(data: "b")])
        #expect(try reader.feed(Array("\n".utf8)).isEmpty)
    }

    @Test("a partial BOM is data, not skipped; a BOM later in the stream is kept")
    func bom() throws {
        var reader = ServerSentEventReader()
        let events = try reader.feed([0xEF, 0xBB] + Array("x\n\ndata: \u{FEFF}y\n\n".utf8))
        #expect(events == [ServerSentEvent(data: "\u{FEFF}y")])
    }

    @Test("a line without an end past the limit is an error, not unbounded memory")
    func tooLong() throws {
        var reader = ServerSentEventReader(maximumLineLength: 16)
        #expect(throws: ServerSentEventReader.Failure.lineTooLong(16)) {
            _ = try reader.feed([UInt8](repeating: UInt8(ascii: "a"), count: 17))
        }
    }

    @Test("server.connected in OpenCode 1.x's global, 1.x's per-directory and 2.x's shapes; heartbeats are not it")
    func serverConnected() {
        #expect(OpenCodeAnswer.isServerConnected("{\"payload\":{\"type\":\"server.connected\",\"properties\":{}}}"))
        #expect(
            OpenCodeAnswer.isServerConnected(
                "{\"directory\":\"global\",\"payload\":{\"type\":\"server.connected\",\"properties\":{}}}"))
        #expect(OpenCodeAnswer.isServerConnected("{\"type\":\"server.connected\",\"properties\":{}}"))
        #expect(OpenCodeAnswer.isServerConnected("{\"id\":\"evt_1\",\"type\":\"server.connected\",\"data\":{}}"))
        #expect(!OpenCodeAnswer.isServerConnected("{\"payload\":{\"type\":\"server.heartbeat\",\"properties\":{}}}"))
        #expect(!OpenCodeAnswer.isServerConnected("server.connected"))
    }
}
