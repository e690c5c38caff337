import CCurl
import Foundation

/// What a push request may take and where it trusts: the one set of knobs of `PushHTTP`.
public struct PushHTTPOptions: Sendable {
    /// A CA file trusted beside the system's (`--push-ca-file`), for a self-hosted server.
    public var caFile: String?
    /// Seconds a connection (and its TLS handshake) may take.
    public var connectTimeout: Double = 10
    /// Seconds a whole request may take (a stream has none: `silence` watches it).
    public var timeout: Double = 15
    /// Bytes of an answer kept; a longer answer is refused (ntfy's answers are a few hundred).
    public var answerLimit = 64 * 1024
    /// Bytes of one line of a stream; ntfy's messages are at most 4 KiB plus their fields.
    public var lineLimit = 32 * 1024

    public init(caFile: String? = nil) { self.caFile = caFile }
}

/// One HTTP request: method, URL, headers and body.
public struct PushHTTPRequest: Sendable {
    public var method: String
    public var url: PushURL
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// What follows the URL on the request line (`/json?since=…`): octunnel's own text only.
    var suffix = ""
    /// A stream (`GET /TOPIC/json`) has no overall timeout.
    var streaming = false

    public init(method: String, url: PushURL, headers: [(String, String)] = [], body: [UInt8]? = nil) {
        (self.method, self.url, self.headers, self.body) = (method, url, headers, body)
    }
}

/// An HTTP answer: its status and (bounded) body.
public struct PushHTTPAnswer: Sendable {
    public let status: Int
    public let body: [UInt8]
}

/// HTTPS (and plain HTTP) through libcurl: the server's certificate and host name verified
/// against the system's CAs and `PushHTTPOptions.caFile`, `HTTPS_PROXY`/`https_proxy`,
/// `NO_PROXY` honoured (libcurl reads them), only http and https, no redirects, every answer and
/// line bounded. A certificate that does not verify fails the TLS handshake, before any byte of
/// the request is sent. Nothing above this folder sees libcurl.
public struct PushHTTP: Sendable {
    public let options: PushHTTPOptions

    public init(options: PushHTTPOptions = PushHTTPOptions()) { self.options = options }

    /// Sends `request` and returns the answer; any status is an answer, a failure to get one throws.
    public func send(_ request: PushHTTPRequest) throws(PushError) -> PushHTTPAnswer {
        let easy = try CurlEasy(request, options: options, sink: CurlSink(limit: options.answerLimit))
        let code = easy.perform()
        guard code == CURLE_OK else { throw easy.failure(code, url: request.url) }
        return PushHTTPAnswer(status: easy.status, body: easy.sink.bytes)
    }

    /// Reads `request`'s answer line by line into `onLine` until the server ends it, `onLine`
    /// returns false, `stop` is stopped (from any thread), or nothing came for `silence` seconds.
    /// Returns nil when it ended by `stop` or `onLine`; else why it ended.
    public func stream(
        _ request: PushHTTPRequest, stop: PushStreamStop, silence: Double,
        onLine: @escaping (String) -> Bool
    ) throws(PushError) -> PushError? {
        var request = request
        request.streaming = true
        let easy = try CurlEasy(request, options: options, sink: CurlSink(limit: options.lineLimit, onLine: onLine))
        let stream = try CurlStream()
        guard stop.attach(stream) else { return nil }
        defer { stop.detach() }
        return stream.run(easy, url: request.url, silence: silence)
    }
}

/// Stops a `PushHTTP.stream` from another thread, promptly, whether it is connecting, reading or
/// waiting; a stop before the stream starts makes it not start.
public final class PushStreamStop: @unchecked Sendable {
    private let state = Locked<(stopped: Bool, stream: CurlStream?)>((false, nil))

    public init() {}

    /// Stops the stream now and every one attached later.
    public func stop() {
        var stream: CurlStream?
        state.update {
            $0.stopped = true
            stream = $0.stream
        }
        stream?.stop()
    }

    public var isStopped: Bool { state.value.stopped }

    fileprivate func attach(_ stream: CurlStream) -> Bool {
        var stopped = false
        state.update {
            stopped = $0.stopped
            if !stopped { $0.stream = stream }
        }
        return !stopped
    }

    fileprivate func detach() { state.update { $0.stream = nil } }
}
