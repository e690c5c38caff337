/// One event of a `text/event-stream`, as the HTML standard's "dispatch the event" builds it.
public struct ServerSentEvent: Equatable, Sendable {
    /// The `event:` field; "message" when the frame had none.
    public var type: String
    /// Every `data:` line of the frame joined with "\n".
    public var data: String
    /// The last `id:` seen on the stream so far (it carries over between events).
    public var lastEventID: String
    /// The `retry:` value of this frame in milliseconds, if it had a valid one.
    public var retry: Int?

    public init(type: String = "message", data: String, lastEventID: String = "", retry: Int? = nil) {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
        self.retry = retry
    }
}

/// Turns the bytes of an event stream, in pieces of any size, into events.
///
/// It follows the parsing rules of the HTML standard (§9.2.6): a UTF-8 BOM at the start is
/// skipped; lines end in CRLF, LF or CR (a CR ending one read and an LF starting the next are one
/// line end); a line starting with ":" is a comment (OpenCode 2's `: heartbeat`); `event:`,
/// `data:`, `id:` and `retry:` are fields, with one space after the colon removed; an empty line
/// dispatches the event, and a frame without data dispatches nothing. Lines are cut at line-end
/// bytes before they are decoded, so a UTF-8 character split across reads is never split here.
public struct ServerSentEventReader: Sendable {
    /// A line longer than this (no line end within it) is an error rather than unbounded memory.
    public let maximumLineLength: Int
    /// An event whose data lines add up to more than this (no blank line ends it) is an error too.
    public let maximumEventSize: Int

    /// Why the stream cannot be read on.
    public enum Failure: Error, Equatable {
        case lineTooLong(Int)
        case eventTooLarge(Int)
    }

    private var line: [UInt8] = []
    private var afterCR = false
    private var atStart = true
    private var bomBytes = 0
    private var type = ""
    private var data: [String] = []
    private var hasData = false
    private var dataBytes = 0
    private var lastEventID = ""
    private var retry: Int?

    public init(maximumLineLength: Int = 1 << 20, maximumEventSize: Int = 1 << 20) {
        self.maximumLineLength = maximumLineLength
        self.maximumEventSize = maximumEventSize
    }

    /// Feeds the next bytes of the stream; returns the events they complete, in order.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) throws(Failure) -> [ServerSentEvent]
    where Bytes.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if atStart {
                // Skip a leading BOM (EF BB BF), even when it arrives a byte at a time.
                let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
                if byte == bom[bomBytes] {
                    bomBytes += 1
                    if bomBytes == bom.count { atStart = false }
                    continue
                }
                atStart = false
                if bomBytes > 0 { line.append(contentsOf: bom[..<bomBytes]) }
            }
            switch byte {
            case UInt8(ascii: "\n"):
                if afterCR { afterCR = false; continue }
                if let event = try endLine() { events.append(event) }
            case UInt8(ascii: "\r"):
                afterCR = true
                if let event = try endLine() { events.append(event) }
            default:
                afterCR = false
                line.append(byte)
                if line.count > maximumLineLength { throw .lineTooLong(maximumLineLength) }
            }
        }
        return events
    }

    /// Processes one complete line; an empty one dispatches the frame.
    private mutating func endLine() throws(Failure) -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        // Split on the bytes, as the standard does on code points: a combining mark after the
        // colon, the space or a NUL must not hide it inside a Character.
        let fieldBytes: ArraySlice<UInt8>
        var valueBytes: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            fieldBytes = line[..<colon]
            valueBytes = line[(colon + 1)...]
            if valueBytes.first == UInt8(ascii: " ") { valueBytes = valueBytes.dropFirst() }
        } else {
            fieldBytes = line[...]
            valueBytes = []
        }
        let value = String(decoding: valueBytes, as: UTF8.self)
        switch String(decoding: fieldBytes, as: UTF8.self) {
        case "event": type = value
        case "data":
            dataBytes += value.utf8.count + 1
            if dataBytes > maximumEventSize { throw .eventTooLarge(maximumEventSize) }
            data.append(value); hasData = true
        case "id": if !valueBytes.contains(0) { lastEventID = value }
        case "retry":
            if !valueBytes.isEmpty, valueBytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                retry = Int(value)
            }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer { type = ""; data = []; hasData = false; dataBytes = 0; retry = nil }
        guard hasData else { return nil }
        return ServerSentEvent(
            type: type.isEmpty ? "message" : type, data: data.joined(separator: "\n"),
            lastEventID: lastEventID, retry: retry)
    }
}
