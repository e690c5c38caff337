import Foundation

/// A deliberately small HTTP/1.1 client for the few requests made through the local forward:
/// a GET or a POST with a bounded body, and a GET whose event stream goes through `ServerSentEventReader`.
/// It reads Content-Length, chunked and read-until-close bodies, tells "closed without any
/// answer" apart from every other failure, and never waits past its one hard deadline
/// (docs/architecture.md says why it is not URLSession).
struct HTTPProbe {
    let host: String
    let port: Int
    let deadline: Date
    var authorization: String?
    /// What the request carries that must never be shown (the password and its token): taken
    /// out of every piece of the answer a failure quotes, before it is cut.
    var secrets: [String] = []
    /// A long wait's other business (a stream followed for as long as `tunnel up` runs).
    var idle: IdleWork?
    /// Told the local port of each connection as it is made (the event follower's stream, kept
    /// off a burst's extra session).
    var connected: ((Int) -> Void)?

    /// What a wait for bytes also waits for, with no tick (issue 48: a follower that woke every
    /// 0.1 s to see whether to stop cost a laptop 10 wake-ups a second): `stop` ends the wait at
    /// once, as if the deadline had passed; `turn` runs when `nextTurn` (a `MonotonicClock`
    /// time; nil: none) comes. Between them the thread sleeps until bytes come.
    struct IdleWork {
        let stop: StopSignal
        let nextTurn: () -> Double?
        let turn: () -> Void
    }

    /// The head of a response.
    struct Head {
        let status: Int
        let headers: [String: String]
    }

    /// Why a request got no HTTP answer.
    enum Failure: Error {
        case cannotConnect(String)
        case closedWithoutAnswer
        case timedOut
        /// Connected, but not one byte came back before the deadline.
        case silent
        case malformed(String)
    }

    private final class Connection {
        let socket: OwnedDescriptor
        var buffer: [UInt8] = []
        var closed = false
        init(socket: OwnedDescriptor) { self.socket = socket }
    }

    private func open(
        path: String, accept: String, method: String = "GET", body: [UInt8] = [],
        headers: [(String, String)] = []
    ) throws(Failure) -> Connection {
        let socket: OwnedDescriptor
        do {
            socket = try Sockets.connect(host: host, port: port, timeout: max(0.1, deadline.timeIntervalSinceNow))
        } catch {
            switch error {
            case .refused: throw .cannotConnect("connection refused")
            case .timedOut: throw .cannotConnect("no answer")
            case .unreachable(_, _, let reason, _), .cannotResolve(_, let reason): throw .cannotConnect(reason)
            default: throw .cannotConnect(error.failure.localizedDescription)
            }
        }
        if let connected, let local = socket.localPort { connected(local) }
        let connection = Connection(socket: socket)
        var request =
            "\(method) \(path) HTTP/1.1\r\nHost: \(HostPort(host: host, port: port))\r\nAccept: \(accept)\r\n"
            + "User-Agent: octunnel\r\nConnection: close\r\n"
        if let authorization { request += "Authorization: \(authorization)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if method != "GET" { request += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8) + body
        guard socket.transmit(bytes, bytes.count) == .moved(bytes.count) else { throw .closedWithoutAnswer }
        return connection
    }

    /// Up to `limit` characters of `text` from the server, the secrets redacted before the cut.
    private func quoted(_ text: String, limit: Int) -> String {
        OutsideText.shown(text, secrets: secrets, limit: limit)
    }

    /// Reads more bytes into the connection's buffer; false at EOF.
    private func fill(_ connection: Connection) throws(Failure) -> Bool {
        if connection.closed { return false }
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw .timedOut }
            guard let idle else {
                if (try? connection.socket.waitReadable(milliseconds: Int32(min(remaining, 86_400) * 1000) + 1)) == true
                {
                    break
                }
                throw .timedOut
            }
            var wait = remaining
            if let next = idle.nextTurn() { wait = min(wait, max(0, next - MonotonicClock.now())) }
            let waited =
                (try? connection.socket.waitReadable(
                    milliseconds: Int32(min(wait, 86_400) * 1000) + 1, unless: idle.stop)) ?? .timedOut
            if waited == .readable { break }
            if waited == .stopped { throw .timedOut }
            idle.turn()
        }
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = connection.socket.receive(&chunk, chunk.count).count
        if count <= 0 { connection.closed = true; return false }
        connection.buffer += chunk[..<count]
        return true
    }

    private func readLine(_ connection: Connection) throws(Failure) -> String? {
        while true {
            if let newline = connection.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                guard newline <= HTTPLimits.lineBytes else {
                    throw .malformed("a line longer than \(HTTPLimits.lineBytes / 1024) KiB")
                }
                var line = Array(connection.buffer[..<newline])
                connection.buffer.removeSubrange(...newline)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            if connection.buffer.count > HTTPLimits.lineBytes {
                throw .malformed("a line longer than \(HTTPLimits.lineBytes / 1024) KiB")
            }
            guard try fill(connection) else { return nil }
        }
    }

    private func readHead(_ connection: Connection) throws(Failure) -> Head {
        let statusLine: String?
        do {
            statusLine = try readLine(connection)
        } catch .timedOut where connection.buffer.isEmpty {
            throw .silent
        } catch .malformed where !connection.buffer.starts(with: Array("HTTP/".utf8)) {
            throw .malformed(
                "it answered \"\(quoted(String(decoding: connection.buffer, as: UTF8.self), limit: 60))\" instead of HTTP"
            )
        }
        guard let statusLine else { throw .closedWithoutAnswer }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = HTTPLimits.statusCode(parts[1]) else {
            throw .malformed("it answered \"\(quoted(statusLine, limit: 60))\" instead of HTTP")
        }
        var headers: [String: String] = [:]
        var count = 0
        var bytes = statusLine.utf8.count
        while let line = try readLine(connection), !line.isEmpty {
            count += 1
            bytes += line.utf8.count + 2
            guard count <= HTTPLimits.headerCount, bytes <= HTTPLimits.headBytes else {
                throw .malformed(
                    "its answer has more than \(HTTPLimits.headerCount) headers or \(HTTPLimits.headBytes / 1024) KiB of them"
                )
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Head(status: status, headers: headers)
    }

    /// Body bytes as they come, de-chunked, never holding more than one read in memory;
    /// `consume` returns false to stop early. Returns true when it stopped at `limit` bytes.
    /// Lengths from the server are checked before any arithmetic: a malformed one is an
    /// error, never a trap.
    @discardableResult
    private func streamBody(
        _ connection: Connection, head: Head, limit: Int, _ consume: ([UInt8]) throws(Failure) -> Bool
    ) throws(Failure)
        -> Bool
    {
        var total = 0
        // RFC 9110 §6.4.1: 204 and 304 have no body, whatever the headers say.
        if head.status == 204 || head.status == 304 { return false }
        /// Hands over the first `count` buffered bytes; true to read on.
        func deliver(_ count: Int) throws(Failure) -> Bool {
            let piece = Array(connection.buffer[..<count])
            connection.buffer.removeFirst(count)
            total += count
            return try consume(piece) && total < limit
        }
        if head.headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            while true {
                guard let sizeLine = try readLine(connection) else { return false }
                guard let size = HTTPLimits.chunkSize(sizeLine) else {
                    throw .malformed("its chunked body has a bad chunk size \"\(quoted(sizeLine, limit: 40))\"")
                }
                if size == 0 { return false }
                var remaining = size
                while remaining > 0 {
                    if connection.buffer.isEmpty, !(try fill(connection)) { return false }
                    let count = min(remaining, connection.buffer.count)
                    remaining -= count
                    guard try deliver(count) else { return total >= limit }
                }
                guard let end = try readLine(connection) else { return false }
                guard end.isEmpty else { throw .malformed("a chunk of its chunked body is longer than its size says") }
            }
        }
        var length: Int?
        if let header = head.headers["content-length"] {
            guard let value = HTTPLimits.contentLength(header) else {
                throw .malformed("it sent Content-Length \"\(quoted(header, limit: 40))\"")
            }
            length = value
        }
        while true {
            if let length, total >= length { return false }
            if !connection.buffer.isEmpty {
                // total < length here, so the subtraction cannot go below zero.
                let count = length.map { min(connection.buffer.count, $0 - total) } ?? connection.buffer.count
                guard try deliver(count) else { return total >= limit }
                connection.buffer = []
                continue
            }
            guard try fill(connection) else { return false }
        }
    }

    /// GET `path`; the body is cut at `limit` bytes.
    func get(_ path: String, accept: String = "application/json", limit: Int = 65536) throws(Failure) -> (Head, [UInt8])
    {
        try exchange(method: "GET", path, body: [], headers: [], accept: accept, limit: limit)
    }

    /// POST `body` (JSON) to `path` with `headers`; the answer's body is cut at `limit` bytes.
    func post(
        _ path: String, body: [UInt8], headers: [(String, String)] = [], limit: Int = 65536
    ) throws(Failure) -> (Head, [UInt8]) {
        try exchange(method: "POST", path, body: body, headers: headers, limit: limit)
    }

    /// GET `path` with `headers` (e.g. `x-opencode-directory`); the body is cut at `limit` bytes.
    func get(_ path: String, headers: [(String, String)], limit: Int = 65536) throws(Failure) -> (Head, [UInt8]) {
        try exchange(method: "GET", path, body: [], headers: headers, limit: limit)
    }

    /// One request and its whole answer: the head and the body cut at `limit` bytes.
    private func exchange(
        method: String, _ path: String, body: [UInt8], headers: [(String, String)], accept: String = "application/json",
        limit: Int
    ) throws(Failure) -> (Head, [UInt8]) {
        let connection = try open(path: path, accept: accept, method: method, body: body, headers: headers)
        let head = try readHead(connection)
        var answer: [UInt8] = []
        try streamBody(connection, head: head, limit: limit) { piece throws(Failure) in
            answer += piece
            return true
        }
        return (head, Array(answer.prefix(limit)))
    }

    /// The outcome of `events`: the head, the body when the answer was not an event stream, and
    /// whether `onEvent` said yes before the deadline.
    struct EventsResult {
        let head: Head
        let body: [UInt8]
        let found: Bool
    }

    /// GET an event stream and hand each event to `onEvent` until it returns true. A non-200
    /// answer is returned with its body (up to 64 KiB) so the caller can judge it.
    func events(
        _ path: String, limit: Int = HTTPLimits.eventStreamBytes, onEvent: (ServerSentEvent) -> Bool
    ) throws(Failure)
        -> EventsResult
    {
        let connection = try open(path: path, accept: "text/event-stream")
        let head = try readHead(connection)
        guard head.status == 200 else {
            var body: [UInt8] = []
            try streamBody(connection, head: head, limit: 65536) { piece throws(Failure) in
                body += piece
                return true
            }
            return EventsResult(head: head, body: body, found: false)
        }
        var reader = ServerSentEventReader()
        var found = false
        do throws(Failure) {
            let full = try streamBody(connection, head: head, limit: limit) { piece throws(Failure) in
                let events: [ServerSentEvent]
                do throws(ServerSentEventReader.Failure) {
                    events = try reader.feed(piece)
                } catch {
                    switch error {
                    case .lineTooLong(let limit):
                        throw Failure.malformed("the event stream \(path) sent a line longer than \(limit) bytes")
                    case .eventTooLarge(let limit):
                        throw Failure.malformed("the event stream \(path) sent an event larger than \(limit) bytes")
                    }
                }
                if events.contains(where: onEvent) { found = true; return false }
                return true
            }
            if full && !found {
                throw Failure.malformed(
                    "the event stream \(path) sent \(HTTPLimits.eventStreamBytes >> 20) MiB without server.connected")
            }
        } catch .timedOut {
            return EventsResult(head: head, body: [], found: found)
        }
        return EventsResult(head: head, body: [], found: found)
    }
}
