import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A deliberately small HTTP/1.1 client for exactly two requests through the local forward:
/// a GET with a bounded body, and a GET whose event stream goes through `ServerSentEventReader`.
/// It reads Content-Length, chunked and read-until-close bodies, tells "closed without any
/// answer" apart from every other failure, and never waits past its one hard deadline
/// (docs/architecture.md says why it is not URLSession).
struct HTTPProbe {
    let host: String
    let port: Int
    let deadline: Date
    var authorization: String?

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
        let fd: Int32
        var buffer: [UInt8] = []
        var closed = false
        init(fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    private func open(path: String, accept: String) throws(Failure) -> Connection {
        let fd: Int32
        do {
            fd = try Sockets.connect(host: host, port: port, timeout: max(0.1, deadline.timeIntervalSinceNow))
        } catch {
            switch error {
            case .connectionRefused: throw .cannotConnect("connection refused")
            case .connectTimeout: throw .cannotConnect("no answer")
            case .unreachable(_, _, let reason), .cannotResolve(_, let reason): throw .cannotConnect(reason)
            default: throw .cannotConnect(error.localizedDescription)
            }
        }
        let connection = Connection(fd: fd)
        var request = "GET \(path) HTTP/1.1\r\nHost: \(HostPort(host: host, port: port))\r\nAccept: \(accept)\r\nUser-Agent: octunnel\r\nConnection: close\r\n"
        if let authorization { request += "Authorization: \(authorization)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw .closedWithoutAnswer }
        return connection
    }

    /// Reads more bytes into the connection's buffer; false at EOF.
    private func fill(_ connection: Connection) throws(Failure) -> Bool {
        if connection.closed { return false }
        let remaining = deadline.timeIntervalSinceNow
        guard remaining > 0 else { throw .timedOut }
        var pfd = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
        guard Sockets.pollRetrying(&pfd, milliseconds: Int32(remaining * 1000) + 1) > 0 else { throw .timedOut }
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = recv(connection.fd, &chunk, chunk.count, 0)
        if count <= 0 { connection.closed = true; return false }
        connection.buffer += chunk[..<count]
        return true
    }

    private func readLine(_ connection: Connection) throws(Failure) -> String? {
        while true {
            if let newline = connection.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(connection.buffer[..<newline])
                connection.buffer.removeSubrange(...newline)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            if connection.buffer.count > 65536 { throw .malformed("a line longer than 64 KiB") }
            guard try fill(connection) else { return nil }
        }
    }

    private func readHead(_ connection: Connection) throws(Failure) -> Head {
        let statusLine: String?
        do {
            statusLine = try readLine(connection)
        } catch .timedOut where connection.buffer.isEmpty {
            throw .silent
        }
        guard let statusLine else { throw .closedWithoutAnswer }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw .malformed("it answered \"\(statusLine.prefix(60))\" instead of HTTP")
        }
        var headers: [String: String] = [:]
        while let line = try readLine(connection), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Head(status: status, headers: headers)
    }

    /// Body bytes as they come, de-chunked; `consume` returns false to stop early.
    private func streamBody(_ connection: Connection, head: Head, limit: Int, _ consume: ([UInt8]) throws(Failure) -> Bool) throws(Failure) {
        var total = 0
        if head.headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            while true {
                guard let sizeLine = try readLine(connection) else { return }
                guard let size = Int(sizeLine.split(separator: ";").first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16) else {
                    throw .malformed("bad chunk size")
                }
                if size == 0 { return }
                while connection.buffer.count < size + 2 {
                    guard try fill(connection) else { break }
                }
                let piece = Array(connection.buffer.prefix(size))
                connection.buffer.removeFirst(min(connection.buffer.count, size + 2))
                total += piece.count
                if !(try consume(piece)) || total >= limit { return }
            }
        }
        let length = head.headers["content-length"].flatMap { Int($0) }
        while true {
            if !connection.buffer.isEmpty {
                var piece = connection.buffer
                if let length { piece = Array(piece.prefix(length - total)) }
                connection.buffer = []
                total += piece.count
                if !(try consume(piece)) || total >= limit { return }
            }
            if let length, total >= length { return }
            guard try fill(connection) else { return }
        }
    }

    /// GET `path`; the body is cut at `limit` bytes.
    func get(_ path: String, accept: String = "application/json", limit: Int = 65536) throws(Failure) -> (Head, [UInt8]) {
        let connection = try open(path: path, accept: accept)
        let head = try readHead(connection)
        var body: [UInt8] = []
        try streamBody(connection, head: head, limit: limit) { piece throws(Failure) in
            body += piece
            return true
        }
        return (head, Array(body.prefix(limit)))
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
    func events(_ path: String, onEvent: (ServerSentEvent) -> Bool) throws(Failure) -> EventsResult {
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
        do {
            try streamBody(connection, head: head, limit: .max) { piece throws(Failure) in
                let events: [ServerSentEvent]
                do {
                    events = try reader.feed(piece)
                } catch {
                    throw .malformed("the event stream \(path) sent a line longer than \(reader.maximumLineLength) bytes")
                }
                if events.contains(where: onEvent) { found = true; return false }
                return true
            }
        } catch .timedOut {
            return EventsResult(head: head, body: [], found: found)
        }
        return EventsResult(head: head, body: [], found: found)
    }
}
